//go:build !unix

package client

import (
	"io/fs"
	"os"
)

func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}

func ownerOf(fs.FileInfo) (int, bool) { return 0, false }
