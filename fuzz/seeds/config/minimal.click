FromInput -> NoOp -> ToOutput;
