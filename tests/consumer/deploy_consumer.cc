// Uses the installed deploy runtime alone (Janus::deploy): loading a model that is not there
// raises a typed error naming the file.
#include <iostream>

#include "janus/base/error.h"
#include "janus/deploy/predictor.h"

int main() {
  try {
    janus::deploy::Predictor p("missing-symbol.json", "missing-0001.safetensors");
  } catch (const janus::Error& e) {
    std::cout << "deploy error: " << e.what() << "\n";
    return 0;
  }
  std::cerr << "deploy_consumer: loading a missing model did not throw\n";
  return 1;
}
