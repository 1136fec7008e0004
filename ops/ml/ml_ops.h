// The ai.onnx.ml family (the classic-ML operators that scikit-learn
// converters emit): each concept file registers its ops through one function
// declared here; RegisterMlOps (ml.cc) calls them all. Shared pieces:
// ml_common.h (attribute and input decoding), post_transform.h (score
// transforms), tree_walk.h (decision forests); the decoded models and their
// per-row finishing that the CPU backend's lowerings reuse: tree_models.h,
// linear_models.h, preprocessing.h (Scaler, Normalizer).
#pragma once

#include "ops/registry.h"

namespace aic {

inline constexpr char kMlDomain[] = "ai.onnx.ml";

void RegisterTreeEnsembleOps(OpRegistry& r);         // tree_ensemble.cc: TreeEnsemble (opset 5)
void RegisterTreeEnsembleClassicOps(OpRegistry& r);  // tree_ensemble_classic.cc: TreeEnsembleClassifier/Regressor
void RegisterLinearModelOps(OpRegistry& r);          // linear_models.cc: LinearClassifier, LinearRegressor
void RegisterSvmOps(OpRegistry& r);                  // svm.cc: SVMClassifier, SVMRegressor
void RegisterPreprocessingOps(OpRegistry& r);        // preprocessing.cc: Scaler, Normalizer, Imputer, FeatureVectorizer
void RegisterEncoderOps(OpRegistry& r);              // encoders.cc: OneHotEncoder, CategoryMapper
void RegisterZipMapOps(OpRegistry& r);               // zipmap.cc: ZipMap (a sequence of maps)

}  // namespace aic
