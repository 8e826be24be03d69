// A structure-aware mutator for the fuzzer: edits IR JSON as a tree instead of as bytes.
#include "tests/fuzz/json_mutator.h"

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/primitives.h"
#include "ir/types.h"

namespace autobatch {
namespace {

using Json = nlohmann::json;

// Every node of the tree, collected without recursion (the input may nest
// deeply).
std::vector<Json*> AllNodes(Json& root) {
  std::vector<Json*> nodes;
  std::vector<Json*> stack = {&root};
  while (!stack.empty()) {
    Json* node = stack.back();
    stack.pop_back();
    nodes.push_back(node);
    if (node->is_structured()) {
      for (Json& child : *node) stack.push_back(&child);
    }
  }
  return nodes;
}

const std::vector<std::string>& Names() {
  static const std::vector<std::string>* names = [] {
    auto* n = new std::vector<std::string>{
        "untyped", "typed", "allocated", "lowered", "null", "temp", "register", "full",
        "prim", "call", "pop", "branch", "goto", "return", "push_goto", "indirect_goto",
        "halt", "kernel", "nan", "inf", "-inf", "f64[2]", "i64[3]", "f32[2,2]", "bool[1]",
        "u64[0]", "i32[1,0]", "f64[1000000]", "i64[2,3,4]", ""};
    for (DType d : kAllDTypes) n->push_back(std::string(DTypeName(d)));
    for (const PrimitiveInfo& info : AllPrimitives()) n->push_back(std::string(info.name));
    return n;
  }();
  return *names;
}

class Mutator {
 public:
  explicit Mutator(uint32_t seed) : rng_(seed) {}

  size_t Below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  // One edit somewhere in `root`; false if the chosen edit did not apply.
  bool EditOnce(Json& root) {
    std::vector<Json*> nodes = AllNodes(root);
    Json& node = *nodes[Below(nodes.size())];
    switch (Below(10)) {
      case 0:
      case 1:
      case 2:
        return EditScalar(node);
      case 3:
        return EditScalar(*PickOfKind(nodes, Json::value_t::number_integer));
      case 4:
        return EditArray(PickOfKind(nodes, Json::value_t::array), nodes);
      case 5:
        return EditArray(&node, nodes);
      case 6:
        if (node.is_object() && !node.empty()) {
          auto it = node.begin();
          std::advance(it, static_cast<long>(Below(node.size())));
          node.erase(it);
          return true;
        }
        return false;
      case 7: {
        // Replace a node with a copy of another (e.g. one op by another).
        Json& other = *nodes[Below(nodes.size())];
        if (&other == &node || Contains(other, node)) return false;
        node = Json(other);
        return true;
      }
      case 8:
        return TypeVariable(root);
      default:
        return EditScalar(*PickOfKind(nodes, Json::value_t::string));
    }
  }

 private:
  Json* PickOfKind(const std::vector<Json*>& nodes, Json::value_t kind) {
    std::vector<Json*> matching;
    for (Json* n : nodes) {
      // Unsigned integers are integers too.
      if (n->type() == kind || (kind == Json::value_t::number_integer &&
                                n->type() == Json::value_t::number_unsigned)) {
        matching.push_back(n);
      }
    }
    return matching.empty() ? nodes[0] : matching[Below(matching.size())];
  }

  static bool Contains(const Json& outer, const Json& inner) {
    for (Json* n : AllNodes(const_cast<Json&>(outer))) {
      if (n == &inner) return true;
    }
    return false;
  }

  bool EditScalar(Json& node) {
    if (node.is_number_integer()) {
      // Mostly small steps: most integers are indices, sizes and lengths.
      const int64_t v = node.get<int64_t>();
      constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
      constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
      switch (Below(10)) {
        case 0:
        case 1:
          node = v == kMax ? 0 : v + 1;
          break;
        case 2:
        case 3:
          node = v == kMin ? 0 : v - 1;
          break;
        case 4:
          node = static_cast<int64_t>(Below(8));
          break;
        case 5:
          node = -1;
          break;
        case 6:
          node = v > (kMax >> 1) || v < (kMin >> 1) ? v / 2 : v * 2;
          break;
        case 7:
          node = kMax;
          break;
        case 8:
          node = kMin;
          break;
        default:
          node = int64_t{1} << 32;
          break;
      }
      return true;
    }
    if (node.is_number_float()) {
      const double v = node.get<double>();
      const Json choices[] = {0.0, -0.0, 1e308, -v, v * 2, 0.5, "nan", "inf", "-inf", 3};
      node = choices[Below(std::size(choices))];
      return true;
    }
    if (node.is_string()) {
      node = Names()[Below(Names().size())];
      return true;
    }
    if (node.is_boolean()) {
      node = !node.get<bool>();
      return true;
    }
    return false;
  }

  bool EditArray(Json* array, const std::vector<Json*>& nodes) {
    if (!array->is_array()) return false;
    Json& a = *array;
    const size_t n = a.size();
    switch (Below(4)) {
      case 0:
        if (n == 0) return false;
        a.erase(a.begin() + static_cast<long>(Below(n)));
        return true;
      case 1:
        if (n == 0) return false;
        a.insert(a.begin() + static_cast<long>(Below(n + 1)), Json(a[Below(n)]));
        return true;
      case 2:
        if (n < 2) return false;
        std::swap(a[Below(n)], a[Below(n)]);
        return true;
      default: {
        // Transplant a node from anywhere (another op, block, literal...).
        Json& from = *nodes[Below(nodes.size())];
        if (Contains(from, a)) return false;
        a.insert(a.begin() + static_cast<long>(Below(n + 1)), Json(from));
        return true;
      }
    }
  }

  bool TypeVariable(Json& root) {
    if (!root.is_object() || !root.contains("variables")) return false;
    Json& vars = root["variables"];
    if (!vars.is_array() || vars.empty()) return false;
    Json& var = vars[Below(vars.size())];
    if (!var.is_object()) return false;
    static const char* kTypes[] = {"f64", "i64", "bool", "u64", "f32", "i32", "f64[2]", "i64[3]"};
    static const char* kStorage[] = {"null", "temp", "register", "full"};
    if (Below(2) == 0) {
      var["type"] = kTypes[Below(std::size(kTypes))];
    } else {
      var["storage"] = kStorage[Below(std::size(kStorage))];
    }
    return true;
  }

  std::minstd_rand rng_;
};

}  // namespace

std::optional<std::string> MutateJsonProgram(std::string_view text, uint32_t seed) {
  Json root = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) return std::nullopt;
  Mutator mutator(seed);
  bool changed = false;
  const size_t edits = 1 + mutator.Below(3);
  for (size_t i = 0; i < edits; ++i) changed |= mutator.EditOnce(root);
  if (!changed) return std::nullopt;
  return root.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace autobatch
