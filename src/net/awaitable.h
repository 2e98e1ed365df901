// The one way to include Asio's coroutine type: Boost 1.74's awaitable.hpp uses std::exchange
// without including <utility>, so whichever header included it first decided whether it built.
#pragma once

#include <utility>

#include <boost/asio/awaitable.hpp>
