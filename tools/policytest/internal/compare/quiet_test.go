package compare

import "github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/cmdline"

func init() { cmdline.SilenceKyvernoLogs() }
