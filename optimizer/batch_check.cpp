#include "optimizer/batch_check.h"

#include <utility>

namespace colltune {

BatchCheck::BatchCheck(double left, double factor, std::set<int> timed_sizes, double blind_factor,
                       double left_total)
    : left_(left),
      factor_(factor),
      blind_factor_(blind_factor),
      left_total_(left_total),
      timed_(std::move(timed_sizes)) {}

bool BatchCheck::admits(int comm_size, double price) const {
  if (runs_ == 0) return true;
  if (!timed_.count(comm_size) && blind_.count(comm_size) &&
      blind_factor_ * (blind_price_ + price) > left_total_)
    return false;
  return dear_ + factor_ * price <= left_;
}

void BatchCheck::add(int comm_size, double price) {
  ++runs_;
  dear_ += factor_ * price;
  if (!timed_.count(comm_size)) {
    blind_.insert(comm_size);
    blind_price_ += price;
  }
}

}  // namespace colltune
