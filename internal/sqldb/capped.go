package sqldb

import (
	"context"
	"database/sql"
	"fmt"
)

// InsertCapped runs insert (an INSERT of one row into table, whose INTEGER
// PRIMARY KEY column is id) with args in tx, then deletes the rows of table
// more than keep ids older than the new one: a log table that keeps its
// newest rows. The new id is read with RETURNING, which SQLite (3.35 on) and
// PostgreSQL share; PostgreSQL drivers have no LastInsertId.
func InsertCapped(ctx context.Context, tx *sql.Tx, table string, keep int, insert string, args ...any) error {
	var id int64
	if err := tx.QueryRowContext(ctx, insert+` RETURNING id`, args...).Scan(&id); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id <= ?`, id-int64(keep)); err != nil {
		return fmt.Errorf("trim %s: %w", table, err)
	}
	return nil
}
