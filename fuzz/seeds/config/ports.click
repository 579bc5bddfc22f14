a :: FromInput; b :: ToOutput; a[0] -> [0]b;
a -> b