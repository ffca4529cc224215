package ctl

import "flag"

func defineDescribe(*flag.FlagSet) execFunc   { return nil }
func defineLayoutLoad(*flag.FlagSet) execFunc { return nil }
func defineBootSet(*flag.FlagSet) execFunc    { return nil }
func defineNodeAdd(*flag.FlagSet) execFunc    { return nil }
func defineNodeRemove(*flag.FlagSet) execFunc { return nil }
func defineWait(*flag.FlagSet) execFunc       { return nil }
func defineCompletion(*flag.FlagSet) execFunc { return nil }
