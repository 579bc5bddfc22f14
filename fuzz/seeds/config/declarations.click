// declarations, anonymous elements, ports, chains, quoted arguments
src :: FromInput;
c :: Classifier(12/0800, 12/86dd, -);
/* a block
   comment */
src -> c;
c[0] -> CheckIPHeader(CHECKSUM true) -> IPLookup("configs/routes-demo.txt") -> [0]out :: ToOutput;
c[1] -> Counter -> out;
c[2] -> Discard;
