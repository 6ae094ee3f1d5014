// backward: walks the recorded nodes from the heads in reverse topological order, calling each
// operator's gradient rule, and stores the leaves' gradients.
#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "janus/autograd/grad_rule.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "grad_steps.h"
#include "tape.h"

namespace janus::autograd {
namespace {

// The gradient buffers that gradient rules of this thread's running backward pass claimed
// (claim_grad_buffer); null outside backward.
thread_local std::vector<const Storage*>* tls_claimed_buffers = nullptr;

// dst = src (kWrite) or dst += src (kAdd), in place on dst's var.
void store_into(const NDArray& dst, const NDArray& src, GradReq req) {
  JANUS_ASSERT(dst.shape() == src.shape() && dst.dtype() == src.dtype(),
               "gradient {} {} does not match its buffer {} {}", src.shape(), src.dtype(),
               dst.shape(), dst.dtype());
  const bool add = req == GradReq::kAdd;
  void* d = dst.raw_data();
  const void* s = src.raw_data();
  const int64_t n = dst.size();
  const DType dtype = dst.dtype();
  engine().push(
      [d, s, n, dtype, add](const RunContext&) {
        if (!add) {
          if (n > 0) std::memcpy(d, s, static_cast<size_t>(n) * dtype_size(dtype));
          return;
        }
        dispatch_dtype(dtype, [&]<typename T>() {
          T* out = static_cast<T*>(d);
          const T* in = static_cast<const T*>(s);
          for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(out[i] + in[i]);
        });
      },
      {src.var()}, {dst.var()}, dst.device(), Lane::kCompute, 0, add ? "grad_add" : "grad_write");
}

void check_not_released(const Node* node) {
  JANUS_CHECK(!node->released, ValueError,
              "backward: the graph through operator '{}' was freed by an earlier backward; pass "
              "retain_graph=true to the first backward to run backward twice",
              node->name());
}

// Nodes reachable from the heads, each after every node that consumes its outputs.
std::vector<Node*> reverse_topological(const std::vector<Node*>& roots) {
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  // Iterative post-order DFS over producer edges, then reversed.
  std::vector<std::pair<Node*, size_t>> stack;
  for (Node* r : roots) {
    if (!seen.insert(r).second) continue;
    stack.emplace_back(r, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->input_meta.size()) {
        const auto& meta = node->input_meta[next++];
        Node* child = meta ? meta->node.get() : nullptr;
        if (child != nullptr && seen.insert(child).second) stack.emplace_back(child, 0);
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  return {order.rbegin(), order.rend()};
}

}  // namespace

void backward(std::span<const NDArray> heads, std::span<const NDArray> head_grads,
              bool retain_graph) {
  JANUS_CHECK(!heads.empty(), ValueError, "backward: no heads given");
  JANUS_CHECK(head_grads.empty() || head_grads.size() == heads.size(), ValueError,
              "backward: got {} head gradients for {} heads, expected one per head or none",
              head_grads.size(), heads.size());
  PauseScope no_record;  // the gradient computation itself is not recorded
  std::vector<const Storage*> claimed;
  struct ClaimScope {
    std::vector<const Storage*>* outer;
    ~ClaimScope() { tls_claimed_buffers = outer; }
  } claim_scope{std::exchange(tls_claimed_buffers, &claimed)};

  std::unordered_map<Node*, std::vector<NDArray>> out_grads;
  std::unordered_map<AutogradMeta*, std::pair<std::shared_ptr<AutogradMeta>, NDArray>> leaf_grads;
  std::vector<Node*> roots;
  for (size_t h = 0; h < heads.size(); ++h) {
    const NDArray& head = heads[h];
    JANUS_CHECK(head.defined(), ValueError, "backward: head {} is undefined", h);
    const auto& meta = head.autograd_meta();
    JANUS_CHECK(needs_grad(meta), ValueError,
                "backward: head {} (shape {}) has no recorded history: compute it inside an "
                "autograd::RecordScope from arrays given attach_grad",
                h, head.shape());
    NDArray hg = h < head_grads.size() && head_grads[h].defined()
                     ? head_grads[h]
                     : ones(head.shape(), head.dtype(), head.device());
    JANUS_CHECK(hg.shape() == head.shape(), ShapeError,
                "backward: head gradient {} has shape {}, expected the head's shape {}", h,
                hg.shape(), head.shape());
    if (meta->is_leaf()) {
      auto& slot = leaf_grads[meta.get()];
      slot.first = meta;
      accumulate_grad(slot.second, hg);
      continue;
    }
    Node* node = meta->node.get();
    check_not_released(node);
    auto& grads = out_grads[node];
    grads.resize(node->outputs.size());
    accumulate_grad(grads[static_cast<size_t>(meta->output_index)], hg);
    roots.push_back(node);
  }

  const std::vector<Node*> order = reverse_topological(roots);
  GradUses uses;
  for (const NDArray& head : heads) ++uses[head.autograd_meta().get()];
  for (const Node* node : order) {
    for (const auto& meta : node->input_meta) {
      if (meta) ++uses[meta.get()];
    }
  }
  GradSteps steps(order, std::move(uses), head_grads);
  for (Node* node : order) {
    check_not_released(node);
    auto& grads = out_grads[node];
    grads.resize(node->outputs.size());
    if (auto [conv, dy] = steps.pool_step(node, grads); conv != nullptr) {
      auto& up = out_grads[conv];
      up.resize(conv->outputs.size());
      accumulate_grad(up[0], dy);
      out_grads.erase(node);
      continue;
    }
    const std::vector<NDArray> in_grads = steps.input_grads(node, std::move(grads));
    for (size_t i = 0; i < in_grads.size(); ++i) {
      const auto& meta = node->input_meta[i];
      if (!meta || !in_grads[i].defined()) continue;
      if (meta->is_leaf()) {
        auto& slot = leaf_grads[meta.get()];
        slot.first = meta;
        accumulate_grad(slot.second, in_grads[i]);
      } else {
        auto& up = out_grads[meta->node.get()];
        up.resize(meta->node->outputs.size());
        accumulate_grad(up[static_cast<size_t>(meta->output_index)], in_grads[i]);
      }
    }
    out_grads.erase(node);  // its gradients are consumed: free them early
  }

  for (auto& [raw, slot] : leaf_grads) {
    const auto& meta = slot.first;
    if (meta->req == GradReq::kNull) continue;
    // The gradient is the buffer itself: a rule (GradSteps) or a recorded function
    // (overwritten_grad) wrote it there, and it was the only contribution.
    if (meta->req == GradReq::kWrite && slot.second.is_same(meta->grad)) continue;
    store_into(meta->grad, slot.second, meta->req);
  }
  if (!retain_graph) {
    for (Node* node : order) {
      node->released = true;
      node->inputs.clear();
      node->outputs.clear();
      node->function_grad = nullptr;  // what it captured (saved values) goes now
    }
  }
}

bool claim_grad_buffer(const NDArray& buffer) {
  if (tls_claimed_buffers == nullptr || !buffer.defined()) return false;
  const Storage* s = buffer.storage().get();
  if (std::find(tls_claimed_buffers->begin(), tls_claimed_buffers->end(), s) !=
      tls_claimed_buffers->end()) {
    return false;
  }
  tls_claimed_buffers->push_back(s);
  return true;
}

}  // namespace janus::autograd
