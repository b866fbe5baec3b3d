/// poseact's version: `poseact --version`, and the package's (notebooks-free-scripts/package.sh
/// reads it from here).
let poseactVersion = "0.55.0"
