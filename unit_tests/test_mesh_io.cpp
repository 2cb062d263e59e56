// Tests of spk/io/mesh_io.hpp: every shared mesh against the counts its file states (headers,
// comments, or lines counted here with an independent iostream pass), spot checks of vertices and
// elements, the same surface read from different formats, small hand-written files of every
// format and feature (ascii and binary), and one test per kind of malformed input, checking that
// the message names the file, the line (or byte) and the offending value.
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/mesh.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_common.hpp"

namespace {

namespace fs = std::filesystem;
using Tri = std::array<int, 3>;
using Tet = std::array<int, 4>;
using Vec3 = std::array<double, 3>;

std::string mesh_path(const std::string& name) { return spk_test::data_dir() + "/meshes/" + name; }

/// A fresh directory under the system temp directory, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("spk_test_mesh_" + std::to_string(rd()) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }
  /// Writes `bytes` to a file of the directory and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    out << bytes;
    REQUIRE(out.good());
    return p;
  }

 private:
  fs::path path_;
};

/// Runs f, requires it to throw E, and requires every string of `parts` in the message.
template <class E, class F>
void check_throws(F&& f, const std::vector<std::string>& parts) {
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    const std::string msg = e.what();
    for (const auto& p : parts) {
      INFO("message: " << msg);
      INFO("expected to contain: " << p);
      CHECK(msg.find(p) != std::string::npos);
    }
  }
  CHECK(thrown);
}

/// Lines of a text file starting with `prefix`, counted with std::getline.
std::int64_t count_lines_starting(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::string line;
  std::int64_t n = 0;
  while (std::getline(in, line))
    if (line.compare(0, prefix.size(), prefix) == 0) ++n;
  return n;
}

/// Little-endian bytes of a value (the test machine's order is checked below).
template <class T>
std::string le(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(&s[0], &v, sizeof(T));
  return s;
}
template <class T>
std::string be(T v) {
  std::string s = le(v);
  return std::string(s.rbegin(), s.rend());
}

bool host_is_little_endian() {
  const std::uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

void check_vec(const Vec3& got, const Vec3& want, double tol = 0) {
  for (int d = 0; d < 3; ++d) CHECK(std::abs(got[d] - want[d]) <= tol);
}

}  // namespace

// --- the shared meshes -------------------------------------------------------------------------

TEST_CASE("shared .obj meshes: counts of v and f lines, first vertex and face") {
  for (const char* name :
       {"armadillo.obj", "cow.obj", "fandisk.obj", "spot.obj", "stanford-bunny.obj"}) {
    INFO(std::string(name));
    const auto m = spk::read_triangle_mesh(mesh_path(name));
    CHECK(std::int64_t(m.n_vertices()) == count_lines_starting(mesh_path(name), "v "));
    // every face of these files is a triangle
    CHECK(std::int64_t(m.n_triangles()) == count_lines_starting(mesh_path(name), "f "));
    spk::check_mesh(m);
  }
  // counts stated in the Meshlab comments
  const auto cow = spk::io::read_obj(mesh_path("cow.obj"));
  CHECK(cow.n_vertices() == 2903);
  CHECK(cow.n_triangles() == 5804);
  check_vec(cow.vertices[0], {2.292449, -0.871852, -0.882400});
  CHECK(cow.triangles[0] == Tri{0, 1, 2});
  const auto bunny = spk::io::read_obj(mesh_path("stanford-bunny.obj"));
  CHECK(bunny.n_vertices() == 35947);
  CHECK(bunny.n_triangles() == 69451);
  CHECK(bunny.triangles[0] == Tri{21216, 21215, 20399});
  const auto arm = spk::io::read_obj(mesh_path("armadillo.obj"));
  CHECK(arm.n_vertices() == 43243);
  CHECK(arm.n_triangles() == 86482);
  check_vec(arm.vertices[0], {-0.35444599999999998, 0.351858, 0.21984200000000001});
  CHECK(arm.triangles[0] == Tri{39369, 38991, 38543});
  const auto spot = spk::io::read_obj(mesh_path("spot.obj"));  // "f 739/1 735/2 736/3"
  CHECK(spot.triangles[0] == Tri{738, 734, 735});
}

TEST_CASE("shared .off meshes: counts of the header line") {
  for (const char* name :
       {"beetle.off", "bunny.off", "camelhead.off", "decimated-knight.off", "fertility.off"}) {
    INFO(std::string(name));
    std::ifstream in(mesh_path(name));
    std::string magic;
    std::int64_t nv = 0, nf = 0;
    in >> magic >> nv >> nf;
    REQUIRE(magic == "OFF");
    const auto m = spk::read_triangle_mesh(mesh_path(name));
    CHECK(std::int64_t(m.n_vertices()) == nv);
    CHECK(std::int64_t(m.n_triangles()) == nf);  // all faces are triangles
    spk::check_mesh(m);
  }
  const auto knight = spk::io::read_off(mesh_path("decimated-knight.off"));
  check_vec(knight.vertices[0], {0.603331983089447, 0.647517025470734, 0.474732011556625});
  CHECK(knight.triangles.back() == Tri{230, 166, 151});
}

TEST_CASE("shared .ply mesh (binary little endian, one triangle strip)") {
  // header: 134345 float vertices, one strip of 373830 ints with 35048 restarts (-1); its
  // 268686 triangles have no repeated vertex and form a closed, consistently oriented surface
  const auto m = spk::read_triangle_mesh(mesh_path("igea.ply"));
  CHECK(m.n_vertices() == 134345);
  CHECK(m.n_triangles() == 268686);
  spk::check_mesh(m);
  // the strip starts 0 1 2 3 ...: triangles (0 1 2), (2 1 3), (2 3 4)
  CHECK(m.triangles[0] == Tri{0, 1, 2});
  CHECK(m.triangles[1] == Tri{2, 1, 3});
  CHECK(m.triangles[2] == Tri{2, 3, 4});
  CHECK(spk::enclosed_volume(m) > 0);
}

TEST_CASE("shared Medit .mesh files: counts of the section headers") {
  struct Case {
    const char* name;
    std::size_t vertices, triangles, tetrahedra;
  };
  for (const Case& c : {Case{"bunny.mesh", 5433, 6966, 34055}, Case{"hand.mesh", 7234, 9556, 29998},
                        Case{"octopus-low.mesh", 452, 898, 1140}}) {
    INFO(std::string(c.name));
    const auto s = spk::read_triangle_mesh(mesh_path(c.name));
    CHECK(s.n_vertices() == c.vertices);
    CHECK(s.n_triangles() == c.triangles);
    const auto v = spk::read_tet_mesh(mesh_path(c.name));
    CHECK(v.n_vertices() == c.vertices);
    CHECK(v.n_tetrahedra() == c.tetrahedra);
    spk::check_mesh(s);
    spk::check_mesh(v);
    CHECK(spk::volume(v) > 0);
  }
  const auto hand = spk::io::read_medit_tetrahedra(mesh_path("hand.mesh"));
  check_vec(hand.vertices[0], {0.013411, -0.798051, -0.081061});
  CHECK(hand.tetrahedra[0] == Tet{4468, 4279, 6838, 4472});  // "4469 4280 6839 4473 0"
  // bunny.mesh's surface is bunny.off's
  const auto a = spk::io::read_medit_triangles(mesh_path("bunny.mesh"));
  const auto b = spk::io::read_off(mesh_path("bunny.off"));
  CHECK(std::abs(spk::surface_area(a) - spk::surface_area(b)) <= 1e-12 * spk::surface_area(b));
}

TEST_CASE("shared Gmsh file (version 2.2 binary) equals the Medit file of the same mesh") {
  const auto t = spk::read_tet_mesh(mesh_path("hand.msh"));
  const auto s = spk::read_triangle_mesh(mesh_path("hand.msh"));
  // $Nodes 7234; element blocks of 9556 triangles (type 2) and 29998 tetrahedra (type 4)
  CHECK(t.n_vertices() == 7234);
  CHECK(t.n_tetrahedra() == 29998);
  CHECK(s.n_triangles() == 9556);
  const auto tm = spk::io::read_medit_tetrahedra(mesh_path("hand.mesh"));
  const auto sm = spk::io::read_medit_triangles(mesh_path("hand.mesh"));
  CHECK(t.tetrahedra == tm.tetrahedra);
  CHECK(s.triangles == sm.triangles);
  double max_diff = 0;
  for (std::size_t v = 0; v < t.n_vertices(); ++v)
    for (int d = 0; d < 3; ++d)
      max_diff = std::max(max_diff, std::abs(t.vertices[v][d] - tm.vertices[v][d]));
  CHECK(max_diff <= 1e-6);  // the .mesh file prints 6 decimals
}

TEST_CASE("shared TetGen files: .ele, .node and base name") {
  for (const char* name : {"femur_interior.1.ele", "femur_interior.1.node", "femur_interior.1"}) {
    INFO(std::string(name));
    const auto m = spk::read_tet_mesh(mesh_path(name));
    CHECK(m.n_vertices() == 1631);                        // .node header "1631 3 0 0"
    CHECK(m.n_tetrahedra() == 6906);                      // .ele header "6906 4 0"
    CHECK(m.tetrahedra[0] == Tet{991, 993, 1042, 1144});  // "1 992 994 1043 1145"
    check_vec(m.vertices[0], {-36.085999999999999, 40.698900000000002, 972.95299999999997});
  }
  check_throws<std::invalid_argument>(
      [] { spk::read_triangle_mesh(mesh_path("femur_interior.1.ele")); },
      {"femur_interior.1.ele", "read_tet_mesh"});
}

// --- small files of every format ---------------------------------------------------------------

TEST_CASE("obj: polygons, slash forms, negative indices, comments and other lines") {
  TempDir dir;
  const std::string p = dir.write("a.obj",
                                  "# comment\n"
                                  "mtllib x.mtl\n"
                                  "v 0 0 0\n"
                                  "v 1 0 0 1.0\n"
                                  "v 1 1 0 0.5 0.5 0.5\n"
                                  "v 0 1 0\n"
                                  "vt 0 0\nvn 0 0 1\n"
                                  "g group\ns off\nusemtl m\n"
                                  "f 1/1/1 2/2/1 3/3/1 4/4/1   # a quad\n"
                                  "f 1//1 2//1 3//1\r\n"
                                  "v 2 0 0\n"
                                  "f -1 -4 -3\n"
                                  "l 1 2\n"
                                  "\n");
  const auto m = spk::read_triangle_mesh(p);
  REQUIRE(m.n_vertices() == 5);
  check_vec(m.vertices[2], {1, 1, 0});
  REQUIRE(m.n_triangles() == 4);
  CHECK(m.triangles[0] == Tri{0, 1, 2});
  CHECK(m.triangles[1] == Tri{0, 2, 3});
  CHECK(m.triangles[2] == Tri{0, 1, 2});
  CHECK(m.triangles[3] == Tri{4, 1, 2});
}

TEST_CASE("off: variants, comments, polygons with colours, counts on the header line") {
  TempDir dir;
  const auto m = spk::read_triangle_mesh(dir.write("a.off",
                                                   "# leading comment\n"
                                                   "COFF 4 2 0\n"
                                                   "0 0 0 255 0 0 255\n"
                                                   "1 0 0 255 0 0 255\r\n"
                                                   "\n"
                                                   "# comment between vertices\n"
                                                   "1 1 0 255 0 0 255\n"
                                                   "0 1 0 255 0 0 255\n"
                                                   "4 0 1 2 3 1 0 0\n"
                                                   "3 3 2 1\n"));
  REQUIRE(m.n_vertices() == 4);
  check_vec(m.vertices[3], {0, 1, 0});
  REQUIRE(m.n_triangles() == 3);
  CHECK(m.triangles[0] == Tri{0, 1, 2});
  CHECK(m.triangles[1] == Tri{0, 2, 3});
  CHECK(m.triangles[2] == Tri{3, 2, 1});
}

TEST_CASE("ply ascii: extra properties and elements, double coordinates, tristrips") {
  TempDir dir;
  const auto m = spk::read_triangle_mesh(dir.write("a.ply",
                                                   "ply\n"
                                                   "format ascii 1.0\n"
                                                   "comment made by hand\n"
                                                   "element vertex 4\n"
                                                   "property double x\n"
                                                   "property float nx\n"
                                                   "property double y\n"
                                                   "property double z\n"
                                                   "property list uchar int extra\n"
                                                   "element face 1\n"
                                                   "property uchar flags\n"
                                                   "property list uchar uint vertex_index\n"
                                                   "element edge 1\n"
                                                   "property int vertex1\n"
                                                   "property int vertex2\n"
                                                   "element tristrips 1\n"
                                                   "property list int int vertex_indices\n"
                                                   "end_header\n"
                                                   "0 9 0 0 2 5 6\n"
                                                   "1 9 0 0 0\n"
                                                   "1 9 1 0 1 7\n"
                                                   "0.5 9 1 0.25 0\n"
                                                   "1 4 0 1 2 3\n"
                                                   "0 1\n"
                                                   "7 0 1 2 -1 3 2 2\n"));
  REQUIRE(m.n_vertices() == 4);
  check_vec(m.vertices[3], {0.5, 1, 0.25});
  REQUIRE(m.n_triangles() == 3);
  CHECK(m.triangles[0] == Tri{0, 1, 2});
  CHECK(m.triangles[1] == Tri{0, 2, 3});
  CHECK(m.triangles[2] == Tri{0, 1, 2});  // the second strip (3 2 2) is degenerate: dropped
}

TEST_CASE("ply binary little and big endian: float/double coordinates, uchar/int lists") {
  REQUIRE(host_is_little_endian());
  TempDir dir;
  for (bool big : {false, true}) {
    INFO("big endian " << big);
    auto f32 = [&](float v) { return big ? be(v) : le(v); };
    auto f64 = [&](double v) { return big ? be(v) : le(v); };
    auto i32 = [&](std::int32_t v) { return big ? be(v) : le(v); };
    auto u16 = [&](std::uint16_t v) { return big ? be(v) : le(v); };
    std::string body;
    const double xs[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0.125}};
    for (const auto& x : xs) body += f32(float(x[0])) + f64(x[1]) + f32(float(x[2])) + u16(7);
    body += std::string(1, char(4)) + i32(0) + i32(1) + i32(2) + i32(3);
    body += i32(5) + i32(3) + i32(2) + i32(1) + i32(-1) + i32(0);
    const std::string header = std::string("ply\nformat ") +
                               (big ? "binary_big_endian" : "binary_little_endian") +
                               " 1.0\n"
                               "element vertex 4\n"
                               "property float x\nproperty double y\nproperty float z\n"
                               "property ushort tag\n"
                               "element face 1\nproperty list uchar int vertex_indices\n"
                               "element tristrips 1\nproperty list int int vertex_indices\n"
                               "end_header\n";
    const auto m = spk::read_triangle_mesh(dir.write(big ? "b.ply" : "l.ply", header + body));
    REQUIRE(m.n_vertices() == 4);
    check_vec(m.vertices[3], {0, 1, 0.125});
    REQUIRE(m.n_triangles() == 3);
    CHECK(m.triangles[0] == Tri{0, 1, 2});
    CHECK(m.triangles[1] == Tri{0, 2, 3});
    CHECK(m.triangles[2] == Tri{3, 2, 1});
  }
}

TEST_CASE("medit: sections in any order, skipped sections, comments, keywords' case") {
  TempDir dir;
  const std::string p = dir.write("a.mesh",
                                  "MeshVersionFormatted 2\n"
                                  "# comment\n"
                                  "Dimension\n3\n"
                                  "Vertices\n5\n"
                                  "0 0 0 1\n1 0 0 1\n0 1 0 1\n0 0 1 1\n1 1 1 0\n"
                                  "Edges 1\n1 2 0\n"
                                  "Corners 2 1 2\n"
                                  "tetrahedra\n2\n1 2 3 4 0\n2 3 4 5 0\n"
                                  "Triangles 1\n1 2 3 7\n"
                                  "Normals 1 0 0 1\n"
                                  "End\n");
  const auto s = spk::read_triangle_mesh(p);
  REQUIRE(s.n_vertices() == 5);
  REQUIRE(s.n_triangles() == 1);
  CHECK(s.triangles[0] == Tri{0, 1, 2});
  const auto t = spk::read_tet_mesh(p);
  REQUIRE(t.n_tetrahedra() == 2);
  CHECK(t.tetrahedra[1] == Tet{1, 2, 3, 4});
  check_vec(t.vertices[4], {1, 1, 1});
}

TEST_CASE("gmsh 2.2 ascii and binary: node tags, points, lines, unknown sections") {
  TempDir dir;
  // nodes tagged 10, 20, 30, 40, 50 (not 1..n); elements of types 15, 1, 2, 4
  const std::string ascii =
      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
      "$PhysicalNames\n1\n2 1 \"surface\"\n$EndPhysicalNames\n"
      "$Nodes\n5\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n50 1 1 1\n$EndNodes\n"
      "$Elements\n5\n"
      "1 15 2 0 1 10\n"
      "2 1 2 0 1 10 20\n"
      "3 2 2 0 1 10 20 30\n"
      "4 4 2 0 1 10 20 30 40\n"
      "5 4 3 0 1 7 20 30 40 50\n"
      "$EndElements\n"
      "$NodeData\n1\n\"u\"\n$EndNodeData\n";
  const auto s = spk::read_triangle_mesh(dir.write("a.msh", ascii));
  REQUIRE(s.n_vertices() == 5);
  REQUIRE(s.n_triangles() == 1);
  CHECK(s.triangles[0] == Tri{0, 1, 2});
  const auto t = spk::read_tet_mesh(dir.write("a.msh", ascii));
  REQUIRE(t.n_tetrahedra() == 2);
  CHECK(t.tetrahedra[1] == Tet{1, 2, 3, 4});
  check_vec(t.vertices[4], {1, 1, 1});

  REQUIRE(host_is_little_endian());
  std::string bin = "$MeshFormat\n2.2 1 8\n" + le(std::int32_t(1)) + "\n$EndMeshFormat\n";
  bin += "$Nodes\n5\n";
  const double xs[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  for (int i = 0; i < 5; ++i)
    bin += le(std::int32_t(10 * (i + 1))) + le(xs[i][0]) + le(xs[i][1]) + le(xs[i][2]);
  bin += "\n$EndNodes\n$Elements\n3\n";
  bin += le(std::int32_t(2)) + le(std::int32_t(1)) + le(std::int32_t(2));
  bin += le(std::int32_t(1)) + le(std::int32_t(0)) + le(std::int32_t(1));
  bin += le(std::int32_t(10)) + le(std::int32_t(20)) + le(std::int32_t(30));
  bin += le(std::int32_t(4)) + le(std::int32_t(2)) + le(std::int32_t(1));
  for (int e = 0; e < 2; ++e) {
    bin += le(std::int32_t(2 + e)) + le(std::int32_t(5));
    for (int k = 0; k < 4; ++k) bin += le(std::int32_t(10 * (k + 1 + e)));
  }
  bin += "\n$EndElements\n";
  const auto tb = spk::read_tet_mesh(dir.write("b.msh", bin));
  CHECK(tb.vertices == t.vertices);
  CHECK(tb.tetrahedra == t.tetrahedra);
  const auto sb = spk::read_triangle_mesh(dir.write("b.msh", bin));
  CHECK(sb.triangles == s.triangles);
}

TEST_CASE("tetgen: zero-based nodes, attributes and markers, 10-node elements") {
  TempDir dir;
  dir.write("z.node",
            "# nodes\n5 3 1 1\n0 0 0 0 9.5 1\n1 1 0 0 9.5 1\n2 0 1 0 9.5 0\n3 0 0 1 1 1\n"
            "4 1 1 1 2 0\n");
  dir.write("z.ele",
            "2 10 1\n0 0 1 2 3 4 4 4 4 4 4 7\n"
            "# comment\n1 1 2 3 4 0 0 0 0 0 0 7\n");
  const auto m = spk::read_tet_mesh(dir.path("z"));
  REQUIRE(m.n_vertices() == 5);
  REQUIRE(m.n_tetrahedra() == 2);
  CHECK(m.tetrahedra[0] == Tet{0, 1, 2, 3});
  CHECK(m.tetrahedra[1] == Tet{1, 2, 3, 4});
  CHECK(spk::read_tet_mesh(dir.path("z.node")).tetrahedra == m.tetrahedra);
}

// --- errors -----------------------------------------------------------------------------------

TEST_CASE("errors: missing files and unsupported extensions") {
  TempDir dir;
  for (const char* name : {"none.obj", "none.off", "none.ply", "none.mesh", "none.msh"}) {
    const std::string p = dir.path(name);
    check_throws<std::runtime_error>([&] { spk::read_triangle_mesh(p); }, {p, "cannot open"});
  }
  check_throws<std::runtime_error>([&] { spk::read_tet_mesh(dir.path("none.ele")); },
                                   {dir.path("none.node"), "cannot open"});
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(dir.path("a.stl")); },
                                      {"a.stl", "'.stl'", ".obj"});
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(dir.path("a.obj")); },
                                      {"a.obj", "'.obj'"});
}

TEST_CASE("errors: obj") {
  TempDir dir;
  const auto p = dir.write("a.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(p); },
                                      {p + ":4:", "vertex index 9", "[1, 3]"});
  const auto q = dir.write("b.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(q); },
                                      {q + ":4:", "vertex index 0"});
  const auto r = dir.write("c.obj", "v 0 0 0\nv 1 0 0\n\nf -1 -2 -3\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(r); }, {r + ":4:", "-3"});
  const auto s = dir.write("d.obj", "v 0 0 0\nv 1 zero 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(s); }, {s + ":2:", "'zero'"});
  const auto t = dir.write("e.obj", "v 0 0 0\nv 1 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(t); }, {t + ":2:"});
  const auto u = dir.write("f.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(u); },
                                      {u + ":3:", "2 vertices"});
}

TEST_CASE("errors: off") {
  TempDir dir;
  const auto bad = dir.write("a.off", "PLY\n3 1 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(bad); },
                                      {bad + ":1:", "'PLY'"});
  const auto dim4 = dir.write("b.off", "4OFF\n3 1 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(dim4); },
                                      {dim4 + ":1:", "'4OFF'"});
  const auto range = dir.write("c.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(range); },
                                      {range + ":6:", "vertex index 3", "[0, 2]"});
  const auto trunc = dir.write("d.off", "OFF\n3 2 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(trunc); },
                                      {trunc + ":6:", "file ends", "1 of 2 faces"});
  const auto vtrunc = dir.write("e.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(vtrunc); },
                                      {vtrunc + ":", "file ends", "2 of 3 vertices"});
  const auto small = dir.write("f.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n2 0 1\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(small); },
                                      {small + ":6:", "2 vertices"});
}

TEST_CASE("errors: ply") {
  TempDir dir;
  const std::string head =
      "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
      "property float y\nproperty float z\n"
      "element face 1\nproperty list uchar int vertex_indices\nend_header\n";
  const auto range = dir.write("a.ply", head + "0 0 0\n1 0 0\n0 1 0\n3 0 1 5\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(range); },
                                      {range + ":13:", "vertex index 5", "[0, 2]"});
  const auto trunc = dir.write("b.ply", head + "0 0 0\n1 0 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(trunc); },
                                      {trunc + ":", "file ends", "element 'vertex' 2 of 3"});
  const auto fmt = dir.write("c.ply", "ply\nformat binary_middle_endian 1.0\nend_header\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(fmt); },
                                      {fmt + ":2:", "'binary_middle_endian'"});
  const auto magic = dir.write("d.ply", "PLY\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(magic); }, {magic + ":1:"});
  const auto noz = dir.write("e.ply",
                             "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                             "property float y\nend_header\n0 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(noz); }, {noz + ":3:", "'z'"});
  const auto type = dir.write("f.ply",
                              "ply\nformat ascii 1.0\nelement vertex 1\n"
                              "property quad x\nend_header\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(type); },
                                      {type + ":4:", "'quad'"});
  const auto nohead = dir.write("g.ply", "ply\nformat ascii 1.0\nelement vertex 1\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(nohead); },
                                      {nohead + ":", "end_header"});
  // binary: truncated list and index out of range name the byte offset
  std::string bhead =
      "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n"
      "property float y\nproperty float z\n"
      "element face 1\nproperty list uchar int vertex_indices\nend_header\n";
  std::string verts;
  for (int i = 0; i < 9; ++i) verts += le(float(i));
  const auto btrunc = dir.write("h.ply", bhead + verts + std::string(1, char(3)) + le(0));
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(btrunc); },
                                      {btrunc + " (byte ", "file ends", "element 'face' 0 of 1"});
  const auto brange =
      dir.write("i.ply", bhead + verts + std::string(1, char(3)) + le(0) + le(1) + le(-7));
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(brange); },
                                      {brange + " (byte ", "vertex index -7"});
}

TEST_CASE("errors: medit") {
  TempDir dir;
  const std::string v =
      "MeshVersionFormatted 1\nDimension 3\nVertices\n3\n0 0 0 0\n1 0 0 0\n"
      "0 1 0 0\n";
  const auto range = dir.write("a.mesh", v + "Triangles\n1\n1 2 4 0\nEnd\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(range); },
                                      {range + ":10:", "vertex index 4", "[1, 3]"});
  const auto trunc = dir.write("b.mesh", v + "Triangles\n2\n1 2 3 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(trunc); },
                                      {trunc + ":", "file ends", "1 of 2 Triangles"});
  const auto quads = dir.write("c.mesh", v + "Quadrilaterals\n1\n1 2 3 3 0\nTriangles 0\nEnd\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(quads); },
                                      {quads + ":8:", "unsupported element", "Quadrilaterals"});
  const auto hexa = dir.write("d.mesh", v + "Hexahedra\n1\n1 2 3 3 1 2 3 3 0\nEnd\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(hexa); },
                                      {hexa + ":8:", "unsupported element", "Hexahedra"});
  const auto sect = dir.write("e.mesh", v + "Voxels\n1\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(sect); },
                                      {sect + ":8:", "'Voxels'"});
  const auto dim = dir.write("f.mesh", "MeshVersionFormatted 1\nDimension 2\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(dim); },
                                      {dim + ":2:", "dimension 2"});
  const auto none = dir.write("g.mesh", v + "End\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(none); }, {none, "Tetrahedra"});
}

TEST_CASE("errors: gmsh") {
  TempDir dir;
  const std::string head =
      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
      "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n";
  const auto v4 = dir.write("a.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(v4); },
                                      {v4 + ":2:", "version '4.1'"});
  const auto tag = dir.write("b.msh", head + "$Elements\n1\n1 2 2 0 0 1 2 4\n$EndElements\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(tag); },
                                      {tag + ":12:", "node 4"});
  const auto quad = dir.write("c.msh", head + "$Elements\n1\n1 3 2 0 0 1 2 3 3\n$EndElements\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(quad); },
                                      {quad + ":12:", "unsupported element type 3"});
  const auto unknown = dir.write("d.msh", head + "$Elements\n1\n1 99 2 0 0 1 2 3\n$EndElements\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(unknown); },
                                      {unknown + ":12:", "unsupported element type 99"});
  const auto trunc = dir.write("e.msh", head + "$Elements\n2\n1 2 2 0 0 1 2 3\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(trunc); },
                                      {trunc + ":", "file ends", "1 of 2 elements"});
  const auto magic = dir.write("f.msh", "hello\n");
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(magic); },
                                      {magic + ":1:", "'hello'"});
  // binary: truncated node data names the byte offset
  std::string bin = "$MeshFormat\n2.2 1 8\n" + le(std::int32_t(1)) + "\n$EndMeshFormat\n";
  bin += "$Nodes\n3\n" + le(std::int32_t(1)) + le(0.0);
  const auto btrunc = dir.write("g.msh", bin);
  check_throws<std::invalid_argument>([&] { spk::read_triangle_mesh(btrunc); },
                                      {btrunc + " (byte ", "file ends in $Nodes"});
}

TEST_CASE("errors: tetgen") {
  TempDir dir;
  dir.write("a.node", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n");
  dir.write("a.ele", "1 4 0\n1 1 2 3 5\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(dir.path("a.ele")); },
                                      {dir.path("a.ele") + ":2:", "node index 5", "[1, 4]"});
  dir.write("b.node", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n");
  dir.write("b.ele", "1 8 0\n1 1 2 3 4 1 2 3 4\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(dir.path("b")); },
                                      {dir.path("b.ele") + ":1:", "unsupported element with 8"});
  dir.write("c.node", "4 3 0 0\n1 0 0 0\n2 1 0 0\n");
  dir.write("c.ele", "1 4 0\n1 1 2 3 4\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(dir.path("c.node")); },
                                      {dir.path("c.node") + ":", "file ends", "2 of 4 nodes"});
  dir.write("d.node", "2 3 0 0\n1 0 0 0\n3 1 0 0\n");
  check_throws<std::invalid_argument>([&] { spk::read_tet_mesh(dir.path("d.node")); },
                                      {dir.path("d.node") + ":3:", "node index 3"});
}
