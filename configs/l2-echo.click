// L2 echo: every frame goes back out of the port it came in on with its MACs swapped.
//
//   fulcrum run configs/l2-echo.click --port net_null0 --seconds 5

FromInput -> EtherMirror -> ToOutput;
