package sim

import (
	"context"
	"reflect"
	"testing"
)

// Two kaizen variants with the same configuration under different names
// make the same choices and get the same outcomes: the random fill of a
// short guidance is drawn from one stream shared by every kaizen variant,
// so comparing settings is not moved by the fill (many-per-task fills
// most of its K slots at the start, where the per-name streams moved the
// result by several points).
func TestKaizenVariantsShareTheFill(t *testing.T) {
	t.Parallel()
	w, err := mustBuiltin(t, "many-per-task").WithTasks(200)
	if err != nil {
		t.Fatal(err)
	}
	tp := newTape(w, 1)
	specs := policies(t, "kaizen,kaizen:context.credit=blame")
	a, err := runOne(context.Background(), tp, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := runOne(context.Background(), tp, specs[1])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.choices, b.choices) || !reflect.DeepEqual(a.success, b.success) {
		t.Fatal(`"kaizen" and "kaizen:context.credit=blame" (its own default) chose differently`)
	}
}
