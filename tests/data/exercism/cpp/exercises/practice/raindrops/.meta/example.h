#pragma once

#include <string>

namespace raindrops {

std::string convert(int number);

}  // namespace raindrops
