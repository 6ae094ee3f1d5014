// The data layer in one include: datasets, the DataLoader, the IDX reader and Fashion-MNIST.
#pragma once

#include "janus/data/data_loader.h"
#include "janus/data/dataset.h"
#include "janus/data/fashion_mnist.h"
#include "janus/data/idx.h"
