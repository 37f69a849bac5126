//go:build !unix

package pt2

// mapFile cannot map files here: ReadFile reads them.
func mapFile(string) ([]byte, bool) { return nil, false }
