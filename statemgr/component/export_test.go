package component

// SetDefaultHistoryLimit sets the number of changes a history GET without
// limit answers with, until the returned function restores it.
func SetDefaultHistoryLimit(n int) (restore func()) {
	old := defaultHistoryLimit
	defaultHistoryLimit = n
	return func() { defaultHistoryLimit = old }
}
