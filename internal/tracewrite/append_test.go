package tracewrite

import "time"

// Append is AppendAt of a line that carries its own stamp (or none): the tests' writer.
func Append(path string, line string) error {
	_, err := AppendAt(path, nil, func(time.Time) (string, error) { return line, nil })
	return err
}
