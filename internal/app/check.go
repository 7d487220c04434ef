package app

import (
	"fmt"
	"reflect"
	"time"
)

// MaxRecordText bounds any one text field of an imported record.
const MaxRecordText = 1 << 20

// CheckRecord checks what every record read from outside (an import) must
// respect, whatever its type: no time after now (beyond the clock skew; a
// time in the future never decays and would dominate every aggregate),
// none before 1970 unless unset, and every text field valid — within
// MaxRecordText bytes, without control characters other than tab and
// line breaks. It walks structs, slices and maps; the error names the
// field.
func CheckRecord(op string, v any, now time.Time) error {
	return checkValue(op, "", reflect.ValueOf(v), now)
}

var timeType = reflect.TypeFor[time.Time]()

func checkValue(op, path string, v reflect.Value, now time.Time) error {
	switch {
	case !v.IsValid():
		return nil
	case v.Type() == timeType:
		t := v.Interface().(time.Time)
		if t.IsZero() {
			return nil
		}
		if t.Year() < 1970 {
			return Invalid(op, path, "%s is before 1970", t.Format(time.RFC3339))
		}
		if t.After(now.Add(FutureSkew)) {
			return &Error{Op: op, Kind: KindInvalid, Field: path,
				Message: fmt.Sprintf("%s is in the future (now is %s)", t.Format(time.RFC3339), now.Format(time.RFC3339)),
				Hint:    "records from the future would never decay; check the clock of the machine that exported them"}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		return ValidText(op, path, v.String(), MaxRecordText, false)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkValue(op, path, v.Elem(), now)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := jsonName(f)
			if name == "-" {
				continue
			}
			if path != "" && !f.Anonymous {
				name = path + "." + name
			} else if f.Anonymous {
				name = path
			}
			if err := checkValue(op, name, v.Field(i), now); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // raw JSON or bytes: checked by their own decoder
		}
		for i := range v.Len() {
			if err := checkValue(op, fmt.Sprintf("%s[%d]", path, i), v.Index(i), now); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			key := fmt.Sprint(it.Key().Interface())
			if err := checkValue(op, path+"."+key, it.Key(), now); err != nil {
				return err
			}
			if err := checkValue(op, path+"."+key, it.Value(), now); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonName is a struct field's JSON name.
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			tag = tag[:i]
			break
		}
	}
	if tag == "" {
		return f.Name
	}
	return tag
}
