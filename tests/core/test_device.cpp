// Device: parsing, printing, equality, bad strings, and naming the PrivateUse1 backend.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;

TEST_CASE("device: parses cpu, cuda, cuda:N and meta") {
  Device cpu("cpu");
  CHECK(cpu.type() == DeviceType::CPU);
  CHECK(cpu.index() == -1);
  CHECK_FALSE(cpu.has_index());
  CHECK(cpu.is_cpu());
  CHECK_FALSE(cpu.is_cuda());
  CHECK(cpu == kCPU);

  Device cuda("cuda");
  CHECK(cuda.type() == DeviceType::CUDA);
  CHECK(cuda.index() == -1);
  CHECK_FALSE(cuda.has_index());
  CHECK(cuda.is_cuda());

  Device cuda1("cuda:1");
  CHECK(cuda1.type() == DeviceType::CUDA);
  CHECK(cuda1.index() == 1);
  CHECK(cuda1.has_index());
  CHECK(Device("cuda:0").index() == 0);
  CHECK(Device("cuda:127").index() == 127);

  Device meta("meta");
  CHECK(meta.type() == DeviceType::Meta);
  CHECK(meta.is_meta());
  CHECK(meta.index() == -1);
  CHECK(meta == kMeta);

  // CPU and meta accept index 0 and normalize it away, so "cpu:0" is the CPU.
  CHECK(Device("cpu:0") == kCPU);
  CHECK(Device("meta:0") == kMeta);
  // The default device is the CPU.
  CHECK(Device() == kCPU);
}

TEST_CASE("device: str() round-trips") {
  for (const char* text : {"cpu", "cuda", "cuda:0", "cuda:1", "cuda:15", "meta"}) {
    INFO("device ", text);
    Device d(text);
    CHECK(d.str() == text);
    CHECK(Device(d.str()) == d);
  }
  CHECK(Device("cpu:0").str() == "cpu");
  CHECK(Device(DeviceType::CUDA, 3).str() == "cuda:3");
  CHECK(Device(DeviceType::CUDA).str() == "cuda");
  CHECK(Device(DeviceType::Meta).str() == "meta");
  CHECK(Device(std::string("cuda:2")).index() == 2);
  CHECK(device_type_name(DeviceType::CPU) == "cpu");
  CHECK(device_type_name(DeviceType::CUDA) == "cuda");
  CHECK(device_type_name(DeviceType::Meta) == "meta");
}

TEST_CASE("device: equality and hashing look at type and index") {
  CHECK(Device("cuda:0") != Device("cuda:1"));
  CHECK(Device("cuda") != Device("cuda:0"));
  CHECK(Device("cuda:1") == Device(DeviceType::CUDA, 1));
  CHECK(Device("cpu") != Device("meta"));
  std::hash<Device> h;
  CHECK(h(Device("cuda:1")) == h(Device(DeviceType::CUDA, 1)));
  CHECK(h(Device("cuda:1")) != h(Device("cuda:2")));
  CHECK(h(Device("cpu")) != h(Device("cuda")));
}

TEST_CASE("device: bad strings throw ValueError quoting the string") {
  EXPECT_ERROR(ValueError, Device("gpu"), "'gpu'", "cpu", "cuda");
  EXPECT_ERROR(ValueError, Device("cuda:"), "'cuda:'");
  EXPECT_ERROR(ValueError, Device("cuda:-1"), "'cuda:-1'", "-1");
  EXPECT_ERROR(ValueError, Device("cuda:x"), "'cuda:x'", "'x'");
  EXPECT_ERROR(ValueError, Device("cpu:1"), "'cpu:1'");
  EXPECT_ERROR(ValueError, Device("meta:2"), "'meta:2'");
  EXPECT_ERROR(ValueError, Device("cuda:128"), "'cuda:128'");
  EXPECT_ERROR(ValueError, Device("cuda:1x"), "'cuda:1x'");
  EXPECT_ERROR(ValueError, Device("cuda:1:2"), "'cuda:1:2'");
  EXPECT_ERROR(ValueError, Device("cuda: 1"), "'cuda: 1'");
  EXPECT_ERROR(ValueError, Device(""), "Device");
  EXPECT_ERROR(ValueError, Device(":0"), "':0'");
  EXPECT_ERROR(ValueError, Device("CUDA"), "'CUDA'");
  EXPECT_ERROR(ValueError, Device(" cpu"), "' cpu'");
}

TEST_CASE("device: bad type/index pairs throw ValueError") {
  EXPECT_ERROR(ValueError, Device(DeviceType::CPU, 1), "cpu", "1");
  EXPECT_ERROR(ValueError, Device(DeviceType::Meta, 3), "meta", "3");
  EXPECT_ERROR(ValueError, Device(DeviceType::CUDA, -2), "-2");
  CHECK(Device(DeviceType::CPU, 0) == kCPU);
}

TEST_CASE("device: register_privateuse1_backend names the PrivateUse1 device type") {
  register_privateuse1_backend("testdev");
  CHECK(device_type_name(DeviceType::PrivateUse1) == "testdev");

  Device d("testdev");
  CHECK(d.type() == DeviceType::PrivateUse1);
  CHECK(d.index() == -1);
  CHECK(d.str() == "testdev");

  Device d2("testdev:2");
  CHECK(d2.type() == DeviceType::PrivateUse1);
  CHECK(d2.index() == 2);
  CHECK(d2.str() == "testdev:2");
  CHECK(Device(DeviceType::PrivateUse1, 5).str() == "testdev:5");
  CHECK(Device(d2.str()) == d2);

  // The unknown-type message lists the registered name.
  EXPECT_ERROR(ValueError, Device("otherdev"), "'otherdev'", "testdev");
  EXPECT_ERROR(ValueError, Device("testdev:"), "'testdev:'");

  // Registering the same name again is fine.
  register_privateuse1_backend("testdev");
  CHECK(device_type_name(DeviceType::PrivateUse1) == "testdev");
}

TEST_CASE("device: register_privateuse1_backend rejects bad names and keeps the old one") {
  register_privateuse1_backend("testdev");
  EXPECT_ERROR(ValueError, register_privateuse1_backend("cuda"), "register_privateuse1_backend", "'cuda'");
  EXPECT_ERROR(ValueError, register_privateuse1_backend("cpu"), "'cpu'");
  EXPECT_ERROR(ValueError, register_privateuse1_backend("meta"), "'meta'");
  EXPECT_ERROR(ValueError, register_privateuse1_backend("TestDev"), "'TestDev'");
  EXPECT_ERROR(ValueError, register_privateuse1_backend(""), "register_privateuse1_backend");
  EXPECT_ERROR(ValueError, register_privateuse1_backend("9dev"), "'9dev'");
  EXPECT_ERROR(ValueError, register_privateuse1_backend("my-dev"), "'my-dev'");
  EXPECT_ERROR(ValueError, register_privateuse1_backend("my:dev"), "'my:dev'");
  CHECK(device_type_name(DeviceType::PrivateUse1) == "testdev");
  CHECK(Device("testdev:1").type() == DeviceType::PrivateUse1);
}
