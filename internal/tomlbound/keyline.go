package tomlbound

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/BurntSushi/toml"
)

// KeyError is a value a file holds that its reader refuses (out of range, not one of the known words):
// Where then names the line of Key.
type KeyError struct {
	Key []string // the dotted key's parts: ["explore", "share"]
	Msg string
}

func (e *KeyError) Error() string { return e.Msg }

// Where is path, followed by ":LINE" when err is (or wraps) a *KeyError whose key data defines.
func Where(path string, data []byte, err error) string {
	var ke *KeyError
	if errors.As(err, &ke) {
		return At(path, data, ke.Key...)
	}
	return path
}

// At is path, followed by ":LINE" when data defines the dotted key (parts key).
func At(path string, data []byte, key ...string) string {
	if n := KeyLine(data, key...); n > 0 {
		return path + ":" + strconv.Itoa(n)
	}
	return path
}

// probeMessage is what lineProbe fails with: a decode reaching the key ends there, and BurntSushi's
// error then carries the key's line.
const probeMessage = "tomlbound: the key's line"

type lineProbe struct{}

func (lineProbe) UnmarshalTOML(any) error { return errors.New(probeMessage) }

// KeyLine returns the line of the dotted key (parts key) in the TOML document data, 0 when data does
// not define it or does not parse. BurntSushi/toml keeps the positions of keys to itself except in its
// errors, so this decodes data into a struct that holds only that key, as a value that refuses itself:
// the error names the line. The path of errors only, so the second decode costs nothing otherwise.
func KeyLine(data []byte, key ...string) int {
	if len(key) == 0 {
		return 0
	}
	t := reflect.TypeFor[lineProbe]()
	for i := len(key) - 1; i >= 0; i-- {
		tag := fmt.Sprintf("toml:%q", key[i])
		t = reflect.StructOf([]reflect.StructField{{Name: "F", Type: t, Tag: reflect.StructTag(tag)}})
	}
	_, err := Decode(data, reflect.New(t).Interface())
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.Message == probeMessage {
		return pe.Position.Line
	}
	return 0
}
