// A program's control-flow graph in Graphviz DOT.
#include "ir/dot.h"

#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/printer.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

// `text` inside a DOT double-quoted string: `"` and `\` escaped (so no text
// can end the string or start an escape such as \N or \l), any other byte
// outside printable ASCII shown as \xNN. The printer already quotes names
// that way; this covers whatever reaches a label.
std::string DotEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += absl::StrFormat("\\\\x%02x", byte);
    } else {
      out += c;
    }
  }
  return out;
}

// One line of a label: cut to kDotMaxLineChars, escaped, left-justified.
std::string LabelLine(std::string_view text) {
  if (text.size() > static_cast<size_t>(kDotMaxLineChars)) {
    return DotEscape(std::string(text.substr(0, kDotMaxLineChars - 3)) + "...") + "\\l";
  }
  return DotEscape(text) + "\\l";
}

// Reads PrintProgram's text back line by line. The printer writes one op or
// terminator per line and escapes newlines in names (ir/printer.h), so the
// layout below is exact; the AB_CHECKs guard that contract.
class PrintedLines {
 public:
  explicit PrintedLines(std::string_view text) : text_(text) {}

  std::string_view Next() {
    AB_CHECK(next_ < text_.size(), "the printer wrote fewer lines than the IR has");
    size_t end = text_.find('\n', next_);
    if (end == std::string_view::npos) end = text_.size();
    std::string_view line = text_.substr(next_, end - next_);
    next_ = end + 1;
    return line;
  }
  // The `  vars #N: ...` lines the printer writes before a function's
  // first block when names alone would not say which variable is which.
  void SkipVarsLines() {
    while (text_.substr(next_).starts_with("  vars #")) Next();
  }
  // An op or terminator line, without the printer's two-space indent.
  std::string NextIndented() {
    std::string_view line = Next();
    AB_CHECK(line.starts_with("  "), "an op line is indented");
    return std::string(line.substr(2));
  }

 private:
  std::string_view text_;
  size_t next_ = 0;
};

std::string BlockNode(int32_t function, int32_t block) {
  return absl::StrCat("\"f", function, "_b", block, "\"");
}

// Writes the digraph. Bad targets (indices out of range) get nodes of their
// own, collected while edges are written and emitted at the end.
class DotWriter {
 public:
  explicit DotWriter(const Program& program)
      : program_(program), module_(program.module) {}

  std::string Write() {
    const std::string printed = PrintProgram(program_);
    PrintedLines lines(printed);
    absl::StrAppend(&out_, "digraph autobatch {\n  label=\"", LabelLine(lines.Next()),
                    "\";\n  labelloc=t;\n  fontname=\"monospace\";\n"
                    "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                    "  edge [fontname=\"monospace\", fontsize=9];\n");
    if (!module_.kernels.empty()) {
      lines.Next();  // the blank line before the kernels
      for (size_t k = 0; k < module_.kernels.size(); ++k) lines.Next();
    }
    for (size_t f = 0; f < module_.functions.size(); ++f) {
      lines.Next();  // the blank line before each function
      WriteFunction(static_cast<int32_t>(f), lines);
    }
    const Function* entry = FunctionAt(program_.entry.value);
    if (entry != nullptr && (!entry->blocks.empty() || IsStub(*entry))) {
      absl::StrAppend(&out_, "  \"start\" [shape=point];\n  \"start\" -> ",
                      BlockNode(program_.entry.value, 0), ";\n");
    }
    out_ += edges_;
    for (const auto& [node, label] : bad_nodes_) {
      absl::StrAppend(&out_, "  ", node, " [label=\"", LabelLine(label),
                      "\", style=dashed, color=red];\n");
    }
    return out_ + "}\n";
  }

 private:
  // A gradient stub is drawn as one node, which stands for its block 0.
  static bool IsStub(const Function& fn) { return fn.gradient_of && fn.blocks.empty(); }

  const Function* FunctionAt(int32_t index) const {
    if (index < 0 || static_cast<size_t>(index) >= module_.functions.size()) return nullptr;
    return &module_.functions[index];
  }

  // The node of block `block` of function `function`, registering a node
  // for a target that does not exist.
  std::string Target(int32_t function, int32_t block) {
    std::string node = BlockNode(function, block);
    const Function* fn = FunctionAt(function);
    if (fn == nullptr) {
      bad_nodes_.emplace(node, absl::StrCat("@<bad:", function, ">"));
    } else if (IsStub(*fn) && block == 0) {
      return node;
    } else if (block < 0 || static_cast<size_t>(block) >= fn->blocks.size()) {
      bad_nodes_.emplace(node, absl::StrCat("^<bad:", block, "> of function ", function));
    }
    return node;
  }

  void Edge(const std::string& from, const std::string& to, const char* attributes) {
    absl::StrAppend(&edges_, "  ", from, " -> ", to);
    if (*attributes != '\0') absl::StrAppend(&edges_, " [", attributes, "]");
    edges_ += ";\n";
  }

  // A stub: one node labelled with its header line, and a dashed edge to
  // the function it is the gradient of.
  void WriteStub(int32_t f, PrintedLines& lines) {
    const Function& fn = module_.functions[f];
    const std::string header(lines.Next());  // func @g(...) -> (...) = gradient @f wrt 0
    if (fn.signature) lines.Next();
    lines.SkipVarsLines();
    const std::string node = BlockNode(f, 0);
    absl::StrAppend(&out_, "  ", node, " [label=\"",
                    LabelLine(header + (f == program_.entry.value ? "  (entry)" : "")),
                    "\", style=dashed];\n");
    Edge(node, Target(fn.gradient_of->function.value, 0),
         "label=\"gradient of\", style=dashed");
  }

  void WriteFunction(int32_t f, PrintedLines& lines) {
    const Function& fn = module_.functions[f];
    if (IsStub(fn)) {
      WriteStub(f, lines);
      return;
    }
    std::string_view header = lines.Next();  // func @name(...) -> (...) {
    if (header.ends_with(" {")) header.remove_suffix(2);
    absl::StrAppend(&out_, "  subgraph cluster_f", f, " {\n    label=\"",
                    LabelLine(std::string(header) +
                              (f == program_.entry.value ? "  (entry)" : "")),
                    "\";\n    labeljust=l;\n");
    if (fn.signature) lines.Next();
    lines.SkipVarsLines();
    bool returns = false;
    bool halts = false;
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const Block& block = fn.blocks[b];
      const std::string node = BlockNode(f, static_cast<int32_t>(b));
      std::string_view block_header = lines.Next();  // ^3 label:
      if (block_header.ends_with(":")) block_header.remove_suffix(1);
      std::string label = LabelLine(block_header);
      bool stack_ops = false;
      for (size_t i = 0; i < block.ops.size(); ++i) {
        const std::string text = lines.NextIndented();
        const std::string note = StackNote(block.ops[i]);
        stack_ops = stack_ops || !note.empty();
        if (i < static_cast<size_t>(kDotMaxOpsPerBlock)) {
          label += LabelLine(absl::StrCat(text, note));
        }
      }
      if (block.ops.size() > static_cast<size_t>(kDotMaxOpsPerBlock)) {
        label += LabelLine(
            absl::StrCat("... ", block.ops.size() - kDotMaxOpsPerBlock, " more ops"));
      }
      const std::string terminator_note = StackNote(block.terminator);
      stack_ops = stack_ops || !terminator_note.empty();
      label += LabelLine(absl::StrCat(lines.NextIndented(), terminator_note));
      absl::StrAppend(&out_, "    ", node, " [label=\"", label, "\"",
                      stack_ops ? ", style=bold" : "", "];\n");
      for (const Op& op : block.ops) {
        if (const auto* call = std::get_if<CallOp>(&op)) {
          Edge(node, Target(call->callee.value, 0), "label=\"call\", color=blue, style=bold");
        }
      }
      std::visit(
          Overloaded{
              [&](const Branch& t) {
                Edge(node, Target(f, t.then_block.value), "label=\"then\"");
                Edge(node, Target(f, t.else_block.value), "label=\"else\"");
              },
              [&](const Goto& t) { Edge(node, Target(f, t.target.value), ""); },
              [&](const Return&) {
                returns = true;
                Edge(node, absl::StrCat("\"f", f, "_return\""), "");
              },
              [&](const PushGoto& t) {
                Edge(node, Target(t.callee.value, 0), "label=\"call\", color=blue, style=bold");
                Edge(node, Target(f, t.return_to.value), "label=\"return to\", style=dashed");
              },
              [&](const IndirectGoto&) {
                returns = true;
                Edge(node, absl::StrCat("\"f", f, "_return\""), "");
              },
              [&](const Halt&) {
                halts = true;
                Edge(node, absl::StrCat("\"f", f, "_halt\""), "");
              },
          },
          block.terminator);
    }
    if (returns) absl::StrAppend(&out_, "    \"f", f, "_return\" [label=\"return\", shape=oval];\n");
    if (halts) absl::StrAppend(&out_, "    \"f", f, "_halt\" [label=\"halt\", shape=octagon];\n");
    AB_CHECK(lines.Next() == "}", "a function's text ends with its closing brace");
    out_ += "  }\n";
  }

  // `  [push N]` / `  [pop N]` once storage classes exist, else empty.
  std::string StackNote(const Op& op) const {
    std::string tape;
    if (std::holds_alternative<TapePushOp>(op)) tape = "  [tape push]";
    if (std::holds_alternative<TapePopOp>(op)) tape = "  [tape pop]";
    if (!HasStorageClasses()) return tape;
    if (const auto* pop = std::get_if<PopOp>(&op)) {
      return pop->vars.empty() ? "" : absl::StrCat("  [pop ", pop->vars.size(), "]");
    }
    const size_t pushed = PushedVariables(module_, op).size();
    return pushed == 0 ? tape : absl::StrCat(tape, "  [push ", pushed, "]");
  }
  std::string StackNote(const Terminator& terminator) const {
    if (std::holds_alternative<PushGoto>(terminator)) return "  [push pc]";
    if (std::holds_alternative<IndirectGoto>(terminator)) return "  [pop pc]";
    return "";
  }
  bool HasStorageClasses() const {
    return program_.stage == Stage::kAllocated || program_.stage == Stage::kLowered;
  }

  const Program& program_;
  const Module& module_;
  std::string out_;
  std::string edges_;
  std::map<std::string, std::string> bad_nodes_;  // node id -> label
};

}  // namespace

std::string PrintDot(const Program& program) { return DotWriter(program).Write(); }

}  // namespace autobatch
