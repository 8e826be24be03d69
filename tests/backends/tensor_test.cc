// Tensor: construction, conversion from and to std::vector and Eigen
// matrices, and errors on shapes that do not split into lanes.
#include "backends/tensor.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace autobatch {
namespace {

TEST(TensorTest, FromVectorSplitsIntoLanes) {
  absl::StatusOr<Tensor> t = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, {3});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->batch(), 2);
  EXPECT_EQ(t->type().ToString(), "f64[3]");
  EXPECT_EQ(t->ToVector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(Tensor::FromVector<double>({1, 2, 3, 4}, {3}).ok());
}

TEST(TensorTest, EmptyBatchIsAllowed) {
  absl::StatusOr<Tensor> t = Tensor::FromVector<int64_t>({});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->batch(), 0);
}

// A zero-element event shape (f64[0]) gives lanes of no bytes and a tensor
// with no storage (null bytes()); copying such a lane moves nothing and must
// not hand memcpy a null pointer (the sanitizer builds catch that).
TEST(TensorTest, ZeroElementLanesCopyNothing) {
  const TensorType empty_vector{DType::kF64, {0}};
  const Tensor src(empty_vector, 3);
  Tensor dst(empty_vector, 2);
  EXPECT_EQ(src.lane_bytes(), 0);
  EXPECT_EQ(src.size_bytes(), 0);
  dst.CopyLaneFrom(src, /*src_lane=*/2, /*dst_lane=*/1);
  EXPECT_EQ(dst.batch(), 2);
  EXPECT_TRUE(dst == Tensor(empty_vector, 2));
  Tensor one(empty_vector, 1);
  one.CopyLaneFrom(src, /*src_lane=*/0, /*dst_lane=*/0);
  EXPECT_TRUE(one.ToVector<double>().empty());
}

TEST(TensorTest, EigenRoundTripOneRowPerLane) {
  Eigen::MatrixXd m(3, 2);
  m << 1, 2, 3, 4, 5, 6;
  absl::StatusOr<Tensor> t = Tensor::FromEigen(m);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->batch(), 3);
  EXPECT_EQ(t->type().ToString(), "f64[2]");
  EXPECT_EQ(t->ToVector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t->ToEigen<double>(), m);

  Eigen::VectorXd column(4);
  column << 1, 2, 3, 4;
  absl::StatusOr<Tensor> scalars = Tensor::FromEigen(column);
  ASSERT_TRUE(scalars.ok());
  EXPECT_TRUE(scalars->type().IsScalar());
  EXPECT_EQ(scalars->batch(), 4);

  Eigen::MatrixXd six(2, 6);
  six.setZero();
  absl::StatusOr<Tensor> shaped = Tensor::FromEigen(six, std::vector<int64_t>{2, 3});
  ASSERT_TRUE(shaped.ok());
  EXPECT_EQ(shaped->type().ToString(), "f64[2,3]");
  absl::StatusOr<Tensor> bad = Tensor::FromEigen(six, std::vector<int64_t>{4});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("6 columns"), std::string::npos);
}

TEST(TensorTest, IntegerMatricesKeepTheirDtype) {
  Eigen::Matrix<int64_t, Eigen::Dynamic, Eigen::Dynamic> m(2, 1);
  m << 7, -8;
  absl::StatusOr<Tensor> t = Tensor::FromEigen(m);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dtype(), DType::kI64);
  EXPECT_EQ(t->ToVector<int64_t>(), (std::vector<int64_t>{7, -8}));
}

}  // namespace
}  // namespace autobatch
