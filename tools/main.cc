// The janus command-line program.
#include <iostream>

#include "janus/janus.h"

int main(int argc, char** argv) {
  using namespace janus;
  NDArray x = ones({1, 2});
  NDArray y = ones({1, 2});
  std::cout << x * y + 2 << "\n";
  return 0;
}
