package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// varve user add|list|delete: SCRAM users, as Kafka's kafka-configs
// --entity-type users manages them, over AlterUserScramCredentials and
// DescribeUserScramCredentials (KIP-554). The password is salted here,
// by the client, as Kafka's protocol has it: the broker receives the
// salt, the iteration count and the salted password, never the
// password.

func init() { rootCmd.AddCommand(newUserCmd()) }

func newUserCmd() *cobra.Command {
	var f adminFlags
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Add, list and delete SCRAM users (AlterUserScramCredentials, DescribeUserScramCredentials)",
	}
	addAdminFlags(cmd, &f)
	cmd.AddCommand(newUserAddCmd(&f), newUserListCmd(&f), newUserDeleteCmd(&f))
	return cmd
}

// userAddOptions are the flags of varve user add.
type userAddOptions struct {
	password   string
	mechanisms []string
	iterations int32
}

func newUserAddCmd(f *adminFlags) *cobra.Command {
	var o userAddOptions
	cmd := &cobra.Command{
		Use:   "add USER",
		Short: "Add a SCRAM user, or change its password",
		Long: `Set USER's SCRAM credentials for each --mechanism (SCRAM-SHA-256 by
default), as kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=...]'
--entity-type users --entity-name USER does. Without --password the password
is read from the first line of standard input, which keeps it out of the
process list and the shell's history.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserAdd(cmd, f, o, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.password, "password", "", "the password (default: read from standard input)")
	fl.StringSliceVar(&o.mechanisms, "mechanism", []string{"SCRAM-SHA-256"}, "SCRAM-SHA-256 and/or SCRAM-SHA-512")
	fl.Int32Var(&o.iterations, "iterations", 4096, "PBKDF2 iterations, 4096 to 16384")
	return cmd
}

// scramMechanism parses a mechanism's SASL name.
func scramMechanism(name string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(name) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, fmt.Errorf("--mechanism %q: want SCRAM-SHA-256 or SCRAM-SHA-512: %w", name, errUsage)
}

func readPassword(in io.Reader) (string, error) {
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", fmt.Errorf("no password: give --password or a line on standard input: %w", errUsage)
	}
	return pw, nil
}

func runUserAdd(cmd *cobra.Command, f *adminFlags, o userAddOptions, user string) error {
	pw := o.password
	if pw == "" {
		var err error
		if pw, err = readPassword(cmd.InOrStdin()); err != nil {
			return err
		}
	}
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	// One request per mechanism: Kafka refuses a user named twice in one.
	for _, name := range o.mechanisms {
		mech, err := scramMechanism(name)
		if err != nil {
			return err
		}
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mech, Iterations: o.iterations, Password: pw}})
		if err != nil {
			return fmt.Errorf("add user %s: %w", user, err)
		}
		if r := res[user]; r.Err != nil {
			return fmt.Errorf("add user %s (%s): %w%s", user, mech, r.Err, detail(r.ErrMessage))
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Set %s credentials of user %s.\n", mech, user)
	}
	return nil
}

func newUserListCmd(f *adminFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list [USER...]",
		Short: "List SCRAM users with their mechanisms and iterations, sorted (never a password, salt or key)",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, adm, done, err := f.session(cmd)
			if err != nil {
				return err
			}
			defer done()
			described, err := adm.DescribeUserSCRAMs(ctx, args...)
			if err != nil {
				return fmt.Errorf("list users: %w", err)
			}
			return printUsers(cmd.OutOrStdout(), described)
		},
	}
}

// printUsers writes one line per user: the name, a tab, then
// MECHANISM=iterations=N for each mechanism, comma separated (Kafka's
// kafka-configs --describe wording).
func printUsers(w io.Writer, described kadm.DescribedUserSCRAMs) error {
	var errs []error
	for _, u := range described.Sorted() {
		if u.Err != nil {
			errs = append(errs, fmt.Errorf("user %s: %w%s", u.User, u.Err, detail(u.ErrMessage)))
			continue
		}
		var creds []string
		for _, c := range u.CredInfos {
			creds = append(creds, fmt.Sprintf("%s=iterations=%d", c.Mechanism, c.Iterations))
		}
		slices.Sort(creds)
		if _, err := fmt.Fprintf(w, "%s\t%s\n", u.User, strings.Join(creds, ",")); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func newUserDeleteCmd(f *adminFlags) *cobra.Command {
	var mechanisms []string
	cmd := &cobra.Command{
		Use:   "delete USER",
		Short: "Delete a SCRAM user's credentials (every mechanism it has, or those given)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserDelete(cmd, f, mechanisms, args[0])
		},
	}
	cmd.Flags().StringSliceVar(&mechanisms, "mechanism", nil, "only these mechanisms (default: all the user has)")
	return cmd
}

func runUserDelete(cmd *cobra.Command, f *adminFlags, names []string, user string) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	var mechs []kadm.ScramMechanism
	for _, n := range names {
		m, err := scramMechanism(n)
		if err != nil {
			return err
		}
		mechs = append(mechs, m)
	}
	if len(mechs) == 0 {
		described, err := adm.DescribeUserSCRAMs(ctx, user)
		if err != nil {
			return fmt.Errorf("delete user %s: %w", user, err)
		}
		d := described[user]
		if d.Err != nil {
			return fmt.Errorf("delete user %s: %w%s", user, d.Err, detail(d.ErrMessage))
		}
		for _, c := range d.CredInfos {
			mechs = append(mechs, c.Mechanism)
		}
	}
	for _, m := range mechs {
		res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: user, Mechanism: m}}, nil)
		if err != nil {
			return fmt.Errorf("delete user %s: %w", user, err)
		}
		if r := res[user]; r.Err != nil {
			return fmt.Errorf("delete user %s (%s): %w%s", user, m, r.Err, detail(r.ErrMessage))
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s credentials of user %s.\n", m, user)
	}
	return nil
}
