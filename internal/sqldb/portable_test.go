package sqldb

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// portableRule is a SQLite-only construct that a PostgreSQL store could not
// run as written; docs/sql-portability.md says what each maps to.
type portableRule struct {
	name string
	re   *regexp.Regexp // matched against the SQL with literals and comments blanked
	fix  string
	skip *regexp.Regexp // removed from the SQL before re is matched (another rule's)
}

var portableRules = []portableRule{
	{name: "insert-or", re: regexp.MustCompile(`(?i)\bINSERT\s+OR\s+(REPLACE|IGNORE|ABORT|FAIL|ROLLBACK)\b|\bREPLACE\s+INTO\b`),
		fix: "INSERT ... ON CONFLICT (key) DO UPDATE SET ... / DO NOTHING"},
	{name: "conflict-clause", re: regexp.MustCompile(`(?i)\bON\s+CONFLICT\s+(REPLACE|IGNORE|ABORT|FAIL|ROLLBACK)\b`),
		fix: "a plain constraint, and ON CONFLICT (key) DO ... on the INSERT"},
	{name: "autoincrement", re: regexp.MustCompile(`(?i)\bAUTOINCREMENT\b`),
		fix: "INTEGER PRIMARY KEY; if ids must never be reused, allowlist the table here and in the doc (IDENTITY on PostgreSQL)"},
	{name: "without-rowid", re: regexp.MustCompile(`(?i)\bWITHOUT\s+ROWID\b`),
		fix: "a plain table (PostgreSQL has no rowid; a translator must drop the clause)"},
	{name: "strict", re: regexp.MustCompile(`(?i)\)\s*STRICT\b`), fix: "a plain table with typed columns"},
	{name: "rowid", re: regexp.MustCompile(`(?i)\b(rowid|_rowid_|oid)\b`), fix: "an explicit INTEGER PRIMARY KEY column",
		skip: regexp.MustCompile(`(?i)\bWITHOUT\s+ROWID\b`)},
	{name: "blob", re: regexp.MustCompile(`(?i)\bBLOB\b`),
		fix: "TEXT (base64) where it fits; bytes need BYTEA on PostgreSQL: allowlist and document"},
	{name: "json", re: regexp.MustCompile(`(?i)\bjsonb?(_[a-z_]+)?\s*\(|->>?`),
		fix: "decode in Go: SQLite's and PostgreSQL's JSON functions differ in name and semantics"},
	{name: "time-function", re: regexp.MustCompile(`(?i)\b(datetime|date|time|julianday|strftime|unixepoch|timediff)\s*\(|\bCURRENT_(TIMESTAMP|DATE|TIME)\b`),
		fix: "a time computed in Go (the injected clock) passed as an argument"},
	{name: "sqlite-function", re: regexp.MustCompile(`(?i)\b(ifnull|iif|group_concat|instr|printf|typeof|total|randomblob|zeroblob|hex|unhex|changes|total_changes|last_insert_rowid|likelihood|likely|unlikely)\s*\(|\bsqlite_[a-z_]+`),
		fix: "COALESCE, CASE, or Go"},
	{name: "glob", re: regexp.MustCompile(`(?i)\b(GLOB|REGEXP)\b`), fix: "LIKE on normalised values, or Go"},
	{name: "collate", re: regexp.MustCompile(`(?i)\bCOLLATE\s+(NOCASE|RTRIM|BINARY)\b`), fix: "values normalised in Go (lower-case xnames)"},
	{name: "limit", re: regexp.MustCompile(`(?i)\bLIMIT\s+-|\bLIMIT\s+(\?|\d+)\s*,`), fix: "LIMIT n OFFSET m, or no LIMIT"},
	{name: "sqlite-statement", re: regexp.MustCompile(`(?i)\b(PRAGMA|ATTACH|DETACH|INDEXED\s+BY|NOT\s+INDEXED)\b|\bBEGIN\s+(IMMEDIATE|EXCLUSIVE|DEFERRED)\b`),
		fix: "connection settings belong in internal/sqldb (the SQLite driver's setup)"},
	{name: "placeholder", re: regexp.MustCompile(`\?\d|\$\d|(^|[^:\w])[:@$][A-Za-z_]\w*`),
		fix: `plain "?" placeholders, which a PostgreSQL layer rebinds to $1, $2, ...`},
	{name: "empty-in", re: regexp.MustCompile(`(?i)\bIN\s*\(\s*\)`), fix: "skip the condition when the list is empty (PostgreSQL refuses IN ())"},
}

// portableAllow lists the constructs that stay, by file relative to the
// module root; each is documented in docs/sql-portability.md.
var portableAllow = map[string][]string{
	"internal/sqldb/sqldb.go":                                 {"sqlite-statement"},
	"discovery/migrations/0001_init.sql":                      {"blob"},
	"nodes/migrations/0001_init.sql":                          {"blob"},
	"statemgr/migrations/0010_redfish.sql":                    {"blob"},
	"statemgr/migrations/0013_redfish_fru_filters.sql":        {"json"},
	"statemgr/migrations/0016_hwinv_shipped_names.sql":        {"json"},
	"statemgr/migrations/0004_scn.sql":                        {"autoincrement"},
	"statemgr/migrations/0017_component_history.sql":          {"autoincrement"},
	"statemgr/migrations/0018_component_history_by_write.sql": {"autoincrement"},
	"ipxe/dhcp/migrations/1001_leases.sql":                    {"autoincrement"},
	"fanout/migrations/0002_scn_once.sql":                     {"without-rowid"},
	"ipxe/dhcp/migrations/1002_leases_without_rowid.sql":      {"without-rowid"},
}

// portableTypes are the column types both SQLite and PostgreSQL accept with
// the same meaning (INTEGER is 32 bits on PostgreSQL: see the doc).
var portableTypes = map[string]bool{"TEXT": true, "INTEGER": true, "BIGINT": true, "SMALLINT": true,
	"REAL": true, "DOUBLE": true, "BOOLEAN": true, "NUMERIC": true, "BLOB": true}

// sqlText is one migration file or one SQL string literal of a Go file.
type sqlText struct {
	file string // relative to the module root
	line int
	text string
}

// TestSQLPortable scans every embedded migration and every SQL string of
// the daemons (non-test Go files) for the SQLite-only constructs the suite
// no longer uses, so they do not come back; the ones that stay are in
// portableAllow and docs/sql-portability.md.
func TestSQLPortable(t *testing.T) {
	root := moduleRoot(t)
	migs, strs, lastInsert := collectSQL(t, root)
	// A walker that finds nothing would pass everything.
	if len(migs) < 30 || len(strs) < 150 {
		t.Fatalf("found %d migrations and %d SQL strings under %s; the scan is broken", len(migs), len(strs), root)
	}
	t.Logf("scanned %d migrations and %d SQL strings", len(migs), len(strs))
	seen := map[[2]string]bool{}
	check := func(s sqlText, rule, what string) {
		for _, a := range portableAllow[s.file] {
			if a == rule {
				seen[[2]string{s.file, rule}] = true
				return
			}
		}
		t.Errorf("%s:%d: SQLite-only (%s): %s", s.file, s.line, rule, what)
	}
	for _, s := range append(migs, strs...) {
		code, literals := blankSQL(s.text)
		for _, r := range portableRules {
			c := code
			if r.skip != nil {
				c = r.skip.ReplaceAllString(c, "")
			}
			if m := r.re.FindString(c); m != "" {
				check(s, r.name, strconv.Quote(strings.TrimSpace(m))+"; instead: "+r.fix)
			}
		}
		for _, l := range literals {
			// Migrations run without arguments: only strings are rebound.
			if !strings.HasSuffix(s.file, ".sql") && strings.Contains(l, "?") {
				check(s, "quoted-placeholder", `"?" inside a quoted literal or comment would be rebound as a placeholder on PostgreSQL`)
			}
		}
		for _, col := range untypedColumns(code) {
			check(s, "column-type", "column "+col+" has no portable type ("+strings.Join(sortedKeys(portableTypes), ", ")+")")
		}
	}
	for _, s := range lastInsert {
		check(s, "last-insert-id", "LastInsertId: PostgreSQL drivers have none; use INSERT ... RETURNING id")
	}
	for file, rules := range portableAllow {
		for _, r := range rules {
			if !seen[[2]string{file, r}] {
				t.Errorf("portableAllow: %s no longer has %s: remove it here and in docs/sql-portability.md", file, r)
			}
		}
	}
}

func TestBlankSQL(t *testing.T) {
	code, lits := blankSQL("SELECT 'it''s ?' -- json_extract(x)\nFROM \"t\" /* ? */ WHERE a = ?")
	if want := "SELECT '' \nFROM \"\"  WHERE a = ?"; code != want {
		t.Errorf("code = %q, want %q", code, want)
	}
	if len(lits) != 4 || lits[0] != "it's ?" || lits[3] != " ? " {
		t.Errorf("literals = %q", lits)
	}
	if got := untypedColumns("CREATE TABLE t (a TEXT PRIMARY KEY, b, c BLOB NOT NULL, d VARCHAR(3), PRIMARY KEY (a, b)); ALTER TABLE t ADD COLUMN e DEFAULT 0"); strings.Join(got, ",") != "t.b,t.d,t.e" {
		t.Errorf("untypedColumns = %q, want [t.b t.d t.e]", got)
	}
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// collectSQL returns the migrations embedded by the module's Go files (the
// .sql files their //go:embed patterns name), the SQL string literals of its
// non-test Go files, and the places that call LastInsertId.
func collectSQL(t *testing.T, root string) (migs, strs, lastInsert []sqlText) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel := func(p string) string { r, _ := filepath.Rel(root, p); return filepath.ToSlash(r) }
		m, err := embeddedSQL(filepath.Dir(p), f, rel)
		if err != nil {
			return err
		}
		migs = append(migs, m...)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(n.Value); err == nil && looksLikeSQL.MatchString(s) {
					strs = append(strs, sqlText{file: rel(p), line: fset.Position(n.Pos()).Line, text: s})
				}
			case *ast.SelectorExpr:
				if n.Sel.Name == "LastInsertId" {
					lastInsert = append(lastInsert, sqlText{file: rel(p), line: fset.Position(n.Pos()).Line})
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return migs, strs, lastInsert
}

// looksLikeSQL picks the string literals that hold SQL or a piece of it:
// the code base writes SQL keywords in capitals.
var looksLikeSQL = regexp.MustCompile(`\b(SELECT|INSERT INTO|INSERT OR|REPLACE INTO|UPDATE \w+ SET|DELETE FROM|CREATE (UNIQUE )?(TABLE|INDEX)|ALTER TABLE|DROP (TABLE|INDEX)|PRAGMA|WHERE|ON CONFLICT|RETURNING)\b`)

// embeddedSQL reads the .sql files f's //go:embed directives name.
func embeddedSQL(dir string, f *ast.File, rel func(string) string) ([]sqlText, error) {
	var out []sqlText
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			pats, ok := strings.CutPrefix(c.Text, "//go:embed ")
			if !ok {
				continue
			}
			for _, pat := range strings.Fields(pats) {
				if !strings.HasSuffix(pat, ".sql") {
					continue
				}
				files, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
				if err != nil {
					return nil, err
				}
				for _, file := range files {
					b, err := os.ReadFile(file)
					if err != nil {
						return nil, err
					}
					out = append(out, sqlText{file: rel(file), line: 1, text: string(b)})
				}
			}
		}
	}
	return out, nil
}

// blankSQL returns s with the insides of its quoted literals and
// identifiers emptied and its comments removed, and those insides.
func blankSQL(s string) (code string, literals []string) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\'' || s[i] == '"':
			q := s[i]
			j, lit := i+1, []byte{}
			for j < len(s) {
				if s[j] == q && j+1 < len(s) && s[j+1] == q {
					lit, j = append(lit, q), j+2
					continue
				}
				if s[j] == q {
					break
				}
				lit, j = append(lit, s[j]), j+1
			}
			literals = append(literals, string(lit))
			b.WriteByte(q)
			b.WriteByte(q)
			i = j + 1
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			literals = append(literals, s[i+2:i+j])
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				j = len(s) - i - 2
			}
			literals = append(literals, s[i+2:i+2+j])
			i += j + 4
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), literals
}

var (
	createTable = regexp.MustCompile(`(?i)\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\(`)
	addColumn   = regexp.MustCompile(`(?i)\bALTER\s+TABLE\s+(\w+)\s+ADD\s+(?:COLUMN\s+)?(\w+)\s*(\w*)`)
	tableClause = regexp.MustCompile(`(?i)^(PRIMARY|UNIQUE|CHECK|FOREIGN|CONSTRAINT)\b`)
)

// untypedColumns returns table.column for each column of code's CREATE
// TABLE and ADD COLUMN statements whose type is missing or not portable.
func untypedColumns(code string) []string {
	var out []string
	for _, m := range createTable.FindAllStringSubmatchIndex(code, -1) {
		table, body := code[m[2]:m[3]], code[m[1]:]
		depth, start := 0, 0
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == '(' {
				depth++
			}
			if c == ')' && depth > 0 {
				depth--
				continue
			}
			if c == ',' && depth == 0 || c == ')' {
				def := strings.TrimSpace(body[start:i])
				if f := strings.Fields(def); len(f) > 0 && !tableClause.MatchString(def) &&
					(len(f) < 2 || !portableTypes[strings.ToUpper(f[1])]) {
					out = append(out, table+"."+f[0])
				}
				start = i + 1
			}
			if c == ')' {
				break
			}
		}
	}
	for _, m := range addColumn.FindAllStringSubmatch(code, -1) {
		if !portableTypes[strings.ToUpper(m[3])] {
			out = append(out, m[1]+"."+m[2])
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
