package atomicfile

// syncDir is a no-op on Windows, where a directory cannot be opened for
// syncing; the rename itself is what MoveFileEx makes durable.
func syncDir(string) error { return nil }
