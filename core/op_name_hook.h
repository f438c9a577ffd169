// The name of the operator this thread is running, for code below the dispatcher that records
// who asked for something: the caching allocator's memory history names it in each event. The
// dispatcher knows the name (dispatch/current_op.h), but alloc depends on core only, so dispatch
// installs its functions here when the library is loaded and alloc asks through them.
//
// Note [Installing the op-name hooks]
// dispatch/current_op.cpp installs them from a static initializer. That file is always linked
// with the dispatcher, also from a static library: the dispatcher calls its functions on every
// operator call, and CurrentOpScope lives there too. The hooks' storage here is constant-
// initialized, so installing works whichever static initializer runs first. Listeners added
// before the install (an allocator that starts recording from another static initializer) are
// counted, and handed to the dispatcher when its hooks arrive; until then no operator has run
// through the dispatcher, so there is no name to miss.
#pragma once

namespace anatomy::op_name_hook {

struct Hooks {
  const char* (*current)();   // the current operator's name, nullptr when none
  void (*add_listener)();     // the dispatcher names operators while it has listeners...
  void (*remove_listener)();  // ...counted
};

// Once per process (dispatch/current_op.cpp); all three must be non-null.
void install(const Hooks& hooks);

// The operator this thread is running, as dispatch::current_op_name() says ("aten::add.Tensor",
// or a CurrentOpScope's name); nullptr when none, or before the hooks are installed. The string
// lives as long as the process.
const char* current();

// Counted: while any listener is registered the dispatcher names operators (which costs it its
// slow path on every call), so code registers one only while it records names.
void add_listener();
void remove_listener();

}  // namespace anatomy::op_name_hook
