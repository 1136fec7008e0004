// The rewriter library; see rewrite/optimize.h once it lands.
