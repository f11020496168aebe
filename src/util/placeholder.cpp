// Keeps a layer library non-empty while its directory is still being filled.
namespace { [[maybe_unused]] int placeholder_anchor = 0; }
