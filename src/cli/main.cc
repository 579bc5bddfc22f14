#include <cstdio>

int main() { std::puts("fulcrum"); return 0; }
