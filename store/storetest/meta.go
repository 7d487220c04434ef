package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/store"
)

func testMeta(t *testing.T, setup setupFunc) {
	t.Run("GetSet", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := get(b, func(tx store.Tx) (string, error) { return tx.GetMeta(b.ctx, "schema.embedder") })
		requireNotFound(t, "GetMeta of an unset key", err)

		long := longText("value", 16<<10)
		b.update(func(tx store.Tx) error {
			for k, v := range map[string]string{"schema.embedder": "hash-ngram-v1", "empty": "", "ключ 🔑": long} {
				if err := tx.SetMeta(b.ctx, k, v); err != nil {
					return err
				}
			}
			return nil
		})
		for k, want := range map[string]string{"schema.embedder": "hash-ngram-v1", "empty": "", "ключ 🔑": long} {
			got := read(b, func(tx store.Tx) (string, error) { return tx.GetMeta(b.ctx, k) })
			if got != want {
				t.Errorf("GetMeta(%q) = %.40q, want %.40q", k, got, want)
			}
		}
		_, err = get(b, func(tx store.Tx) (string, error) { return tx.GetMeta(b.ctx, "schema") })
		requireNotFound(t, "GetMeta of a prefix of a set key", err)

		b.update(func(tx store.Tx) error { return tx.SetMeta(b.ctx, "schema.embedder", "openai-3-small") })
		got := read(b, func(tx store.Tx) (string, error) { return tx.GetMeta(b.ctx, "schema.embedder") })
		if got != "openai-3-small" {
			t.Errorf("GetMeta after an overwrite = %q, want %q", got, "openai-3-small")
		}
		if got := read(b, func(tx store.Tx) (string, error) { return tx.GetMeta(b.ctx, "empty") }); got != "" {
			t.Errorf("GetMeta(empty) after another key's overwrite = %q, want empty", got)
		}
	})

	t.Run("Projects", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		projects := func() []string {
			t.Helper()
			return read(b, func(tx store.Tx) ([]string, error) { return tx.Projects(b.ctx) })
		}
		requireList(t, "Projects of an empty store", nil, projects())

		// One project per record type that makes a project, plus one with
		// several. Bytewise order: upper case first, multi-byte UTF-8 last.
		b.seed(
			fullOutcome("outcomes", "o-1"),
			fullPattern("patterns", "pat-1", "split by file"),
			fullCriterion("Criteria", "c-1"),
			fullError("errors", "e-1"),
			fullOutcome(uniProject, "o-1"), fullOutcome(uniProject, "o-2"),
			fullPattern(uniProject, "pat-1", "split by file"), fullError(uniProject, "e-1"),
		)
		b.update(func(tx store.Tx) error {
			_, err := tx.LockCriterion(b.ctx, "locked", "c-1", at(1))
			return err
		})
		requireEqual(t, "Projects", []string{uniProject, "Criteria", "errors", "locked", "outcomes", "patterns"}, projects())

		// A project without such records is not listed.
		b.update(func(tx store.Tx) error { return tx.DeletePattern(b.ctx, "patterns", "pat-1") })
		requireEqual(t, "Projects after deleting a project's only record",
			[]string{uniProject, "Criteria", "errors", "locked", "outcomes"}, projects())
	})
}
