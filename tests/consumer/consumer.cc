// Uses the installed framework: an operator through the engine, a blocker, autograd.
#include <iostream>

#include "janus/janus.h"

int main() {
  using namespace janus;
  NDArray x = from_vector<float>({1, -2, 3}, {3});
  autograd::attach_grad(x);
  NDArray y;
  {
    autograd::RecordScope record;
    y = sum(x * x);
  }
  autograd::backward(y);
  std::cout << "sum " << item<float>(y) << " grad " << autograd::grad(x) << "\n";
  return 0;
}
