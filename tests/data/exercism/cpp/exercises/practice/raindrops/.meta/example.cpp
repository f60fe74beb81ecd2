#include "raindrops.h"

namespace raindrops {

std::string convert(int number) {
    std::string sound;
    if (number % 3 == 0) sound += "Pling";
    if (number % 5 == 0) sound += "Plang";
    if (number % 7 == 0) sound += "Plong";
    return sound.empty() ? std::to_string(number) : sound;
}

}  // namespace raindrops
