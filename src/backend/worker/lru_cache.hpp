#pragma once
// A map from string keys that forgets its least recently used entries once their total
// cost passes a budget. Not thread-safe: the owner locks.
#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>

namespace steer::worker {

template <typename Value>
class LruCache {
 public:
  explicit LruCache(std::size_t budget) : budget_(budget) {}

  // The entry for `key`, now the most recently used, or nullptr.
  Value* find(const std::string& key) {
    auto found = index_.find(key);
    if (found == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, found->second);
    return &found->second->value;
  }

  // Adds or replaces the entry, then evicts the least recently used others until the
  // total cost fits the budget (the new entry stays even if it alone is over it).
  Value& insert(const std::string& key, Value value, std::size_t cost = 1) {
    erase(key);
    entries_.push_front(Entry{key, std::move(value), cost});
    index_.emplace(key, entries_.begin());
    total_cost_ += cost;
    while (total_cost_ > budget_ && entries_.size() > 1) erase(entries_.back().key);
    return entries_.front().value;
  }

  std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    std::string key;
    Value value;
    std::size_t cost;
  };

  void erase(const std::string& key) {
    auto found = index_.find(key);
    if (found == index_.end()) return;
    total_cost_ -= found->second->cost;
    auto entry = found->second;
    index_.erase(found);
    entries_.erase(entry);
  }

  std::size_t budget_;
  std::size_t total_cost_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
};

}  // namespace steer::worker
