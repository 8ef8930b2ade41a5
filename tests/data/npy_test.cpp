#include "bulkgnn/data/npy.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "bulkgnn/core/error.hpp"
#include "scratch_dir.hpp"

namespace bulkgnn::data {
namespace {

namespace fs = std::filesystem;

class npy_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("bulkgnn-npy-test-{}-{}", ::testing::UnitTest::GetInstance()->random_seed(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write_bytes(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }

  fs::path dir_;
};

template <class T>
void fill_and_reopen(const fs::path& path, std::vector<std::int64_t> shape) {
  {
    const npy_array a = npy_array::create(path, dtype_of<T>(), shape);
    auto data = a.as<T>();
    for (std::size_t i = 0; i < data.size(); ++i) {
      EXPECT_EQ(data[i], T{0}) << "create must zero-fill";
      data[i] = static_cast<T>(i * 3 + 1) / T{2};
    }
    a.sync();
  }
  const npy_array b = npy_array::open(path);
  EXPECT_EQ(b.type(), dtype_of<T>());
  EXPECT_EQ(b.shape(), shape);
  const auto data = b.as<const T>();
  ASSERT_EQ(static_cast<std::int64_t>(data.size()), b.elements());
  for (std::size_t i = 0; i < data.size(); ++i)
    ASSERT_EQ(data[i], static_cast<T>(i * 3 + 1) / T{2});
}

TEST_F(npy_test, RoundTripsEveryDtypeAndShape) {
  const std::vector<std::vector<std::int64_t>> shapes = {{},     {0},    {1},      {7},
                                                         {3, 5}, {0, 4}, {2, 3, 4}};
  int k = 0;
  for (const auto& shape : shapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    fill_and_reopen<std::int32_t>(dir_ / fmt::format("a{}.npy", k++), shape);
    fill_and_reopen<std::int64_t>(dir_ / fmt::format("a{}.npy", k++), shape);
    fill_and_reopen<float>(dir_ / fmt::format("a{}.npy", k++), shape);
  }
}

TEST_F(npy_test, WritesTheHeaderNumpyWrites) {
  const auto path = dir_ / "x.npy";
  npy_array::create(path, dtype::int32, {3});
  const std::string bytes = read_bytes(path);
  // What np.save(np.zeros(3, '<i4')) writes since numpy 1.20: the sorted dict,
  // room for the first dimension to grow to 21 digits, spaces to a 64-byte
  // boundary, newline.
  const std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  ASSERT_EQ(bytes.size(), 128u + 12u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8, 118);
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes.substr(10 + dict.size(), 117 - dict.size()), std::string(117 - dict.size(), ' '));
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes.substr(128), std::string(12, '\0'));
}

TEST_F(npy_test, AlignsDataTo64BytesForEveryShape) {
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{
           {}, {5}, {3, 4}, {2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1}}) {
    const auto path = dir_ / "y.npy";
    npy_array::create(path, dtype::float32, shape);
    const std::string b = read_bytes(path).substr(0, 4096);
    const std::size_t header =
        10 + (static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8);
    EXPECT_EQ(header % 64, 0u);
    EXPECT_EQ(b[header - 1], '\n');
    EXPECT_EQ(fs::file_size(path),
              header + 4 * static_cast<std::size_t>(npy_array::open(path).elements()));
  }
}

TEST_F(npy_test, ReadsVersion2And16ByteAlignedHeaders) {
  // Keys in another order and 16-byte padding, as older numpy versions wrote.
  std::string header = "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}";
  while ((12 + header.size() + 1) % 16 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string v2("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) v2.push_back(static_cast<char>(header.size() >> (8 * i)));
  v2 += header;
  const float values[4] = {1.5f, -2.0f, 3.25f, 0.0f};
  v2.append(reinterpret_cast<const char*>(values), sizeof values);
  write_bytes(dir_ / "v2.npy", v2);
  const auto a = npy_array::open(dir_ / "v2.npy");
  EXPECT_EQ(a.type(), dtype::float32);
  EXPECT_EQ(a.shape(), (std::vector<std::int64_t>{2, 2}));
  const auto data = a.as<const float>();
  EXPECT_TRUE(std::equal(data.begin(), data.end(), values));
}

void expect_data_error(const fs::path& path, const std::string& fragment) {
  try {
    (void)npy_array::open(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(npy_test, RejectsGarbageWithTheFileName) {
  write_bytes(dir_ / "text.npy", "hello, this is not numpy at all\n");
  expect_data_error(dir_ / "text.npy", "not a .npy file");
  write_bytes(dir_ / "empty.npy", "");
  expect_data_error(dir_ / "empty.npy", "not a .npy file");
  expect_data_error(dir_ / "absent.npy", "open failed");

  npy_array::create(dir_ / "good.npy", dtype::int64, {10});
  const std::string good = read_bytes(dir_ / "good.npy");
  write_bytes(dir_ / "truncated.npy", good.substr(0, good.size() - 1));
  expect_data_error(dir_ / "truncated.npy", "truncated");
  write_bytes(dir_ / "short_header.npy", good.substr(0, 30));
  expect_data_error(dir_ / "short_header.npy", "truncated");

  std::string f8 = good;
  f8.replace(f8.find("<i8"), 3, "<f8");
  write_bytes(dir_ / "f8.npy", f8);
  expect_data_error(dir_ / "f8.npy", "unsupported dtype");
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<i8"), 3, ">i8");
  write_bytes(dir_ / "be.npy", big_endian);
  expect_data_error(dir_ / "be.npy", "unsupported dtype");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  fortran.replace(fortran.find("(10,)"), 5, "(2, 5)");
  write_bytes(dir_ / "fortran.npy", fortran);
  expect_data_error(dir_ / "fortran.npy", "Fortran");
  std::string broken = good;
  broken.replace(broken.find("'shape'"), 7, "'shope'");
  write_bytes(dir_ / "broken.npy", broken);
  expect_data_error(dir_ / "broken.npy", "header");
}

TEST_F(npy_test, WrongTypedAccessNamesTheFile) {
  const auto a = npy_array::create(dir_ / "i.npy", dtype::int32, {4});
  EXPECT_THROW((void)a.as<float>(), data_error);
  try {
    (void)a.as<std::int64_t>();
    ADD_FAILURE() << "no error";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find("i.npy"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'<i4'"), std::string::npos);
  }
}

TEST(mapped_file_test, MovesOwnership) {
  const testing::scratch_dir scratch;
  const auto path = scratch / "mapped.bin";
  auto f = mapped_file::create(path, 4096);
  std::memset(f.data(), 7, 4096);
  mapped_file g = std::move(f);
  EXPECT_EQ(f.data(), nullptr);
  EXPECT_EQ(g.size(), 4096u);
  g.sync();
  const auto r = mapped_file::open_read(path);
  EXPECT_EQ(std::to_integer<int>(r.data()[4095]), 7);
}

}  // namespace
}  // namespace bulkgnn::data
