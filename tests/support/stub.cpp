// Keeps blockq_testing non-empty before helpers exist.
namespace blockq::testing_support {}
