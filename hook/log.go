package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
)

// LogFile is the file in the kaizen home where hooks write their problems:
// a hook never fails the agent's action, so this is where a failure shows.
const LogFile = "hook.log"

// MaxLogBytes is the size at which hook.log is rotated to hook.log.1.
const MaxLogBytes = 1 << 20

// FallbackLogPath is where problems go when the home cannot be written:
// a per-user file in the temporary directory.
func FallbackLogPath() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("kaizen-%d", os.Getuid()), LogFile)
}

// AppendLog appends one line to <home>/hook.log, rotating the file when it
// exceeds MaxLogBytes, and falls back to FallbackLogPath when the home
// cannot be written. It returns the path written.
func AppendLog(home string, at time.Time, msg string) (string, error) {
	// Messages quote what failed (a payload, an error text): scrubbed.
	line := at.UTC().Format(time.RFC3339) + " " + strings.ReplaceAll(strings.TrimSpace(app.Scrub(msg)), "\n", " ") + "\n"
	path := filepath.Join(home, LogFile)
	err := appendLine(path, line)
	if err == nil {
		return path, nil
	}
	fallback := FallbackLogPath()
	if err2 := appendLine(fallback, line); err2 != nil {
		return "", fmt.Errorf("write %s: %v; write %s: %v", path, err, fallback, err2)
	}
	return fallback, nil
}

func appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && fi.Size()+int64(len(line)) > MaxLogBytes {
		// Concurrent hooks may race here; losing a rotation is harmless.
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	// One write of a short line with O_APPEND: concurrent hooks do not
	// interleave within a line.
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
