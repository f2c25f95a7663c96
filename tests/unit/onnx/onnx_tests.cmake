# Included from CMakeLists.txt after the unit test loop. unit_onnx builds small models with
# libonnx's protobuf API (so it links onnx_proto itself) and tests the torchvision models that
# scripts/make_onnx_models.py exports into build/onnx_models (OnnxModels.*: skipped when absent).
if(TARGET unit_onnx AND TARGET onnx_proto)
  target_link_libraries(unit_onnx PRIVATE onnx_proto)
  set(NPUSIM_ONNX_MODELS_DIR ${CMAKE_BINARY_DIR}/onnx_models)
  target_compile_definitions(unit_onnx PRIVATE NPUSIM_ONNX_MODELS_DIR="${NPUSIM_ONNX_MODELS_DIR}")
  # Not part of any default build: `cmake --build build --target onnx_models` (python3-torch,
  # python3-torchvision, python3-onnx: scripts/setup --models). About a minute on 2 cores.
  add_custom_target(onnx_models
    COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/make_onnx_models.py ${NPUSIM_ONNX_MODELS_DIR}
    COMMENT "Exporting the ONNX test models into ${NPUSIM_ONNX_MODELS_DIR}" VERBATIM)
  # With -DNPUSIM_ONNX_MODEL_TESTS=ON, `ctest -L models` exports the models (when missing) and
  # runs OnnxModels.* with the models required. Off by default: the default ctest stays fast.
  option(NPUSIM_ONNX_MODEL_TESTS "register ctest label 'models': export the ONNX test models and test them" OFF)
  if(NPUSIM_ONNX_MODEL_TESTS)
    add_test(NAME onnx_models_export
      COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/scripts/make_onnx_models.py ${NPUSIM_ONNX_MODELS_DIR})
    set_tests_properties(onnx_models_export PROPERTIES FIXTURES_SETUP onnx_models LABELS models TIMEOUT 1800)
    add_test(NAME onnx_models_check COMMAND unit_onnx --gtest_filter=OnnxModels.*)
    set_tests_properties(onnx_models_check PROPERTIES FIXTURES_REQUIRED onnx_models LABELS models TIMEOUT 600
      ENVIRONMENT "NPUSIM_ONNX_MODELS_REQUIRED=1")
  endif()
endif()
