#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// PinSAGE's random-walk neighbours (Ying et al., "Graph Convolutional
// Neural Networks for Web-Scale Recommender Systems", KDD 2018), as DGL's
// RandomWalkNeighborSampler draws them on a homogeneous graph, except that
// a walk's returns to its start are not counted and equal counts keep the
// smaller id (DGL counts returns and keeps the larger): at hop l each
// frontier vertex v starts `walks` walks of at most `traversals` steps; a
// step from u moves to a uniform member of N(u) (a vertex without neighbours
// ends the walk), and after each step but the last a walk ends with
// probability termination_percent / 100 (DGL's termination after each
// traversal: every walk takes its first step). Every vertex a walk visits other than v is
// counted; v's sampled neighbours are the fanouts[l] most visited (the
// smaller id first among equal counts; -1: every visited vertex), each with
// its visit count as the block value, in ascending id. Walk w's step s of
// vertex v in minibatch m draws from the stream (seed, epoch, m,
// walk_stream_layer(l, s, w), v) and its termination from (seed, epoch, m,
// walk_stream_layer(l, 32 + s, w), v): keyed by the destination like
// node-wise draws, so a slice of the seeds samples alone.
[[nodiscard]] sampler_entry pinsage_entry();

}  // namespace bulkgnn::sampler
