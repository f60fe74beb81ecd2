#include "raindrops.h"

namespace raindrops {

std::string convert(int number) {
    return "";
}

}  // namespace raindrops
