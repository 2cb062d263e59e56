// spk/io/mesh_io.hpp: readers of triangle and tetrahedral mesh files.
//
// Formats (the parsing is plain host code in src/mesh_io.cpp):
//  - Wavefront .obj: `v x y z` and `f` lines (`f a b c ...`, `a/t/n`, `a//n` and negative
//    indices, relative to the vertices read so far); polygons are fan-triangulated
//    (a b c d -> a b c, a c d); every other line is ignored.
//  - Object File Format .off (also COFF, NOFF, CNOFF, STOFF headers): the counts, the vertices,
//    the polygons (`n i_1 ... i_n [colour]`, fan-triangulated). Comments start with '#'.
//  - Stanford .ply, ascii, binary_little_endian and binary_big_endian: the `vertex` element's
//    x, y, z properties (any scalar type); `face` elements with a list property
//    `vertex_indices` or `vertex_index` (fan-triangulated) and `tristrips` elements with a list
//    `vertex_indices` (strips separated by -1, alternate triangles flipped to keep the
//    orientation, triangles with a repeated vertex dropped); other elements and properties are
//    skipped.
//  - Medit .mesh (ascii): Dimension 3, Vertices, Triangles, Tetrahedra; the other standard
//    sections (Edges, Corners, Ridges, Normals, ...) are skipped, Quadrilaterals (for triangle
//    meshes) and Hexahedra / Prisms (for tetrahedral meshes) with entries are unsupported.
//  - Gmsh .msh version 2 (2.0, 2.1, 2.2), ascii and binary: $Nodes and $Elements (element type
//    2 = triangle, 4 = tetrahedron); elements of other dimensions and unknown sections are
//    skipped; elements of the requested dimension other than those (quadrangles, hexahedra,
//    second-order elements ...) are unsupported. Node tags may be any positive integers.
//  - TetGen .node / .ele (tetrahedral only): a path ending in .ele or .node, or the base name
//    (`femur_interior.1`); nodes numbered from 0 or 1 as the .node file's first node says;
//    10-node (quadratic) tetrahedra keep their 4 corners.
//
// Vertices keep the file's order; indices become zero-based. Every reader is a few passes over
// the file's bytes (std::from_chars, no regular expressions). Errors: a file that cannot be
// opened or read throws std::runtime_error; malformed content (bad header, truncated file,
// index out of range, unsupported element or section) throws std::invalid_argument naming the
// reader, the file, the line (or the byte offset inside binary data) and the offending value.
#pragma once

#include <spk/mesh/mesh.hpp>
#include <string>

namespace spk {

namespace io {

/// Reads a Wavefront .obj file (triangles). O(file size).
TriangleMesh read_obj(const std::string& path);

/// Reads an .off file (triangles). O(file size).
TriangleMesh read_off(const std::string& path);

/// Reads a .ply file, ascii or binary (triangles from `face` and `tristrips`). O(file size).
TriangleMesh read_ply(const std::string& path);

/// Reads the Vertices and Triangles of a Medit .mesh file. O(file size).
TriangleMesh read_medit_triangles(const std::string& path);

/// Reads the Vertices and Tetrahedra of a Medit .mesh file. O(file size).
TetMesh read_medit_tetrahedra(const std::string& path);

/// Reads the nodes and triangles (element type 2) of a Gmsh 2.x .msh file. O(file size).
TriangleMesh read_gmsh_triangles(const std::string& path);

/// Reads the nodes and tetrahedra (element type 4) of a Gmsh 2.x .msh file. O(file size).
TetMesh read_gmsh_tetrahedra(const std::string& path);

/// Reads a TetGen mesh: `path` is the .ele or the .node file or their common base name.
/// O(file sizes).
TetMesh read_tetgen(const std::string& path);

}  // namespace io

/// Reads a triangle mesh, choosing the reader by the extension (case-insensitive): .obj, .off,
/// .ply, .mesh (its Triangles), .msh (its type-2 elements). Other extensions throw
/// std::invalid_argument listing the supported ones.
TriangleMesh read_triangle_mesh(const std::string& path);

/// Reads a tetrahedral mesh, choosing the reader by the extension (case-insensitive): .mesh
/// (its Tetrahedra), .msh (its type-4 elements), .ele / .node, or a TetGen base name (a path
/// without those extensions for which path.ele exists). Other paths throw
/// std::invalid_argument listing the supported extensions.
TetMesh read_tet_mesh(const std::string& path);

}  // namespace spk
