FromInput -> EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10, "1 02:00:00:00:00:11, x" // c
) -> ToOutput;