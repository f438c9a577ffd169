// The engine's typed errors arrive in Python as the built-in exceptions of matching kinds, with
// the engine's message: IndexError for an index or dimension, TypeError for a dtype, ValueError
// for a shape or argument, NotImplementedError for a missing kernel, MemoryError-like
// anatomy.OutOfMemoryError for the allocator, RuntimeError otherwise (DeviceError, InternalError).
// One mapping serves both nanobind's bound functions (through the translator registered here) and
// the call slots that catch their exceptions themselves (errors.h).
#include "errors.h"

#include <Python.h>

#include <new>
#include <stdexcept>

#include "anatomy/anatomy.h"
#include "bindings.h"

namespace anatomy::python {

namespace {

// anatomy.OutOfMemoryError: a RuntimeError, as torch.cuda.OutOfMemoryError is, so that code
// catching RuntimeError keeps working.
PyObject* out_of_memory_error = nullptr;

PyObject* engine_error_type(const Error& e) {
  if (dynamic_cast<const IndexError*>(&e)) return PyExc_IndexError;
  if (dynamic_cast<const TypeError*>(&e)) return PyExc_TypeError;
  if (dynamic_cast<const ValueError*>(&e)) return PyExc_ValueError;
  if (dynamic_cast<const NotImplementedError*>(&e)) return PyExc_NotImplementedError;
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return out_of_memory_error;
  return PyExc_RuntimeError;
}

PyObject* builtin_exception_type(const nb::builtin_exception& e) {
  switch (e.type()) {
    case nb::exception_type::stop_iteration:
      return PyExc_StopIteration;
    case nb::exception_type::index_error:
      return PyExc_IndexError;
    case nb::exception_type::key_error:
      return PyExc_KeyError;
    case nb::exception_type::value_error:
      return PyExc_ValueError;
    case nb::exception_type::type_error:
      return PyExc_TypeError;
    case nb::exception_type::buffer_error:
      return PyExc_BufferError;
    case nb::exception_type::import_error:
      return PyExc_ImportError;
    case nb::exception_type::attribute_error:
      return PyExc_AttributeError;
    default:
      return PyExc_RuntimeError;
  }
}

}  // namespace

void set_python_error() noexcept {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    PyErr_SetString(builtin_exception_type(e), e.what());
  } catch (const Error& e) {
    PyErr_SetString(engine_error_type(e), e.what());
  } catch (const std::bad_alloc& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const std::overflow_error& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::domain_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::length_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::range_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_SystemError, "an unknown C++ exception reached Python");
  }
}

void bind_errors(nb::module_& m) {
  out_of_memory_error = PyErr_NewExceptionWithDoc(
      "anatomy.OutOfMemoryError", "An allocator could not satisfy a request.", PyExc_RuntimeError, nullptr);
  m.attr("OutOfMemoryError") = nb::handle(out_of_memory_error);
  // nanobind handles its own exceptions and the standard library's itself; the engine's errors
  // come here.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error&) {
      set_python_error();
    }
  });
}

}  // namespace anatomy::python
