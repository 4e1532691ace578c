// The numbers a DAP client gets for things it may ask about later: frameId,
// variablesReference, sourceReference, and the data breakpoints it set (DAP specification,
// "Lifetime of Objects References": frame and variable references last until the program
// moves; source references for the session).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/debugger/debugger.h"

namespace rwd {

/// What a frameId names: a native frame, or (interp >= 0) an interpreter frame, with the
/// native eval-loop frame it runs in.
struct FrameRef {
  pid_t tid = 0;
  size_t frame = 0;  ///< native frame index (0: innermost)
  int interp = -1;   ///< index in the task's interpreter stack, or -1
};

/// What a variablesReference names: a scope of a frame, or a value's children.
struct VarRef {
  enum Kind { Locals, Arguments, Globals, Registers, Children, InterpLocals } kind;
  pid_t tid = 0;
  size_t frame = 0;  ///< native frame index; InterpLocals: index in the interpreter stack
  Value value;       ///< Children: the value whose members or elements these are
};

/// The frame and variable references handed out since the last stop. Numbers are never
/// reused across stops (each stop's go on from the last one's): a number from before the
/// program last moved throws StaleReferenceError (clients race with stops: VS Code asks for an
/// old frame's scopes after a seek), and a client that compares frames by id (VS Code keeps
/// its old call stack on screen until it sees one that differs) sees new frames as new.
class StopReferences {
 public:
  /// Numbers `f` as a frameId.
  int add_frame(FrameRef f);
  /// The frame `id` names.
  const FrameRef& frame(int64_t id) const;
  /// Numbers `v` as a variablesReference.
  int add_variables(VarRef v);
  /// What variablesReference `id` names.
  const VarRef& variables(int64_t id) const;
  /// Forgets every reference: the program moved.
  void clear();

 private:
  std::vector<FrameRef> frames_;  ///< frameId - frame_base_ - 1 -> the frame
  std::vector<VarRef> vars_;      ///< variablesReference - var_base_ - 1 -> what it names
  int64_t frame_base_ = 0;        ///< frameIds up to this one are from earlier stops
  int64_t var_base_ = 0;          ///< likewise for variablesReferences
};

/// The source files named to the client. When sources are served (the client may be on
/// another machine), each gets a sourceReference for the `source` request.
class SourceReferences {
 public:
  /// Notes that `path` was named to the client and returns its sourceReference (0 when
  /// sources are not served).
  int name(const std::string& path, bool serve);
  /// The path sourceReference `ref` stands for. Throws RequestError for an unknown one.
  const std::string& path(int64_t ref) const;
  /// Whether `path` was named to the client (the `source` request serves only those, or
  /// the program's own sources).
  bool named(const std::string& path) const { return named_.count(path) > 0; }

 private:
  std::map<std::string, int> refs_;  ///< path -> sourceReference
  std::vector<std::string> paths_;   ///< sourceReference - 1 -> path
  std::set<std::string> named_;      ///< every path named to the client
};

/// A data breakpoint as set by setDataBreakpoints.
struct DataBreakpoint {
  int id = 0;
  std::string name;  ///< what the user watches ("counter", "p->next")
  WatchInfo watch;
  WatchKind kind = WatchKind::Write;
};

/// The data breakpoints in force, and what dataBreakpointInfo found for each dataId it
/// handed out ("ADDRESS/BYTES/NAME").
struct DataBreakpoints {
  std::vector<DataBreakpoint> set;
  std::map<std::string, WatchInfo> watchable;  ///< dataId -> what dataBreakpointInfo found
  int next_id = 100000;                        ///< ids apart from the Debugger's breakpoints
};

}  // namespace rwd
