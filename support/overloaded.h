// Overloaded{lambdas...}: the std::visit helper used across the code base.
#ifndef AUTOBATCH_SUPPORT_OVERLOADED_H_
#define AUTOBATCH_SUPPORT_OVERLOADED_H_

namespace autobatch {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_OVERLOADED_H_
