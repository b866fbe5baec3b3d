# Sourced by setup.sh and package.sh: the two BlazePose models poseact runs, where they are
# in the PyPI wheel they come from, and their sha256 (the same as PoseModels.sha256 in
# Sources/poseact/PoseModels.swift; a test holds the two lists together).
MODELS_WHEEL="mediapipe==0.10.14"
# name|path inside the wheel|sha256
MODELS=(
    "pose_detection.tflite|mediapipe/modules/pose_detection/pose_detection.tflite|9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c"
    "pose_landmark_full.tflite|mediapipe/modules/pose_landmark/pose_landmark_full.tflite|e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f"
)

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# models_ok DIR: both models are in DIR with their sha256.
models_ok() {
    local m name sum
    for m in "${MODELS[@]}"; do
        IFS='|' read -r name _ sum <<<"$m"
        [[ -f "$1/$name" && "$(sha_of "$1/$name")" == "$sum" ]] || return 1
    done
}
