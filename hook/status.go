package hook

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// StatusDir holds, per client, the last hook event kaizen received (for
// kaizen doctor: did the hooks ever fire, and when).
const StatusDir = "hooks"

// Status is the last hook event of a client.
type Status struct {
	Client  Client    `json:"client"`
	Event   string    `json:"event"`
	Task    string    `json:"task"`
	Project string    `json:"project"`
	Dir     string    `json:"dir,omitempty"`
	At      time.Time `json:"at"`
}

// WriteStatus records a client's last hook event in the home (atomically;
// not synced: it is a diagnostic, not data).
func WriteStatus(home string, s Status) error {
	dir := filepath.Join(home, StatusDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, string(s.Client)+".json")
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ReadStatus returns a client's last hook event; ok is false when its
// hooks never ran in this home.
func ReadStatus(home string, c Client) (Status, bool, error) {
	var s Status
	data, err := os.ReadFile(filepath.Join(home, StatusDir, string(c)+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, false, err
	}
	return s, true, nil
}
