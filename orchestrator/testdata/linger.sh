#!/bin/sh
# linger.sh DIR: a configuration command that never ends. It holds DIR/hold,
# a FIFO the test reads (opening it waits for the test; the test reads EOF
# once every process of the run has died), notes its run in DIR/runs and
# waits for a child, so that the run is more than the shell bos started.
dir=$1
exec 3>"$dir/hold"
echo "$BOS_NODES" >>"$dir/runs"
sleep 3600 &
wait
