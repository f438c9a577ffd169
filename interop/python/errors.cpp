// The engine's typed errors arrive in Python as the built-in exceptions of matching kinds, with
// the engine's message: IndexError for an index or dimension, TypeError for a dtype, ValueError
// for a shape or argument, NotImplementedError for a missing kernel, MemoryError-like
// anatomy.OutOfMemoryError for the allocator, RuntimeError otherwise (DeviceError, InternalError).
#include <Python.h>

#include "anatomy/anatomy.h"
#include "bindings.h"

namespace anatomy::python {

namespace {
// anatomy.OutOfMemoryError: a RuntimeError, as torch.cuda.OutOfMemoryError is, so that code
// catching RuntimeError keeps working.
PyObject* out_of_memory_error = nullptr;
}  // namespace

void bind_errors(nb::module_& m) {
  out_of_memory_error = PyErr_NewExceptionWithDoc(
      "anatomy.OutOfMemoryError", "An allocator could not satisfy a request.", PyExc_RuntimeError, nullptr);
  m.attr("OutOfMemoryError") = nb::handle(out_of_memory_error);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(out_of_memory_error, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace anatomy::python
