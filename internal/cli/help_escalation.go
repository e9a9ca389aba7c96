package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/cmdutil/helpwrap"
)

// NewCmdEscalationTopic builds the help topic `tune help escalation`: docs/escalation.md, embedded, so
// that the playbook an exit 3 points to is there wherever the binary is. A cobra command without a Run
// is listed under "Additional help topics".
func NewCmdEscalationTopic(*Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "escalation",
		Short: "What to do when tune evolve or tune nightly exits 3 (the escalation playbook)",
		Long:  strings.TrimSpace(tune.EscalationPlaybook),
	}
	// The playbook as written, wrapped to the terminal (cobra's template would add usage lines).
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprint(c.OutOrStdout(), helpwrap.Topic(tune.EscalationPlaybook))
	})
	return cmd
}
