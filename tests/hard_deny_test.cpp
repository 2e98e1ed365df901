// Hard denies: each spelling of a destructive command is refused, however it is quoted, wrapped
// or chained, and the everyday commands that resemble them are not.
#include "policy/hard_deny.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

TEST(HardDeny, RefusesDestructiveCommandsInEverySpelling) {
  const char* denied[] = {
      "rm -rf /", "rm -Rf /", "rm -fr /", "rm -r -f /", "rm --recursive --force /",
      "rm -rf --no-preserve-root /", "rm -rf -- /", "rm -rf //", "rm -rf /.", "rm -rf /..",
      "rm -rf /*", "r''m -rf /*", "\\rm -rf /", "/bin/rm -rf /", "\"rm\" -rf '/'",
      "rm -rf ~", "rm -rf ~/", "rm -rf ~/*", "rm -rf $HOME", "rm -rf \"$HOME\"/", "rm -rf ${HOME}",
      "rm -rf /etc", "rm -rf /usr/", "rm -r /var/*", "rm -rf /home",
      "echo hi && rm -rf /", "true; rm -rf /", "ls | rm -rf /", "false || rm -rf /",
      "sudo rm -rf /", "sudo -u root rm -rf /", "sudo env bash -c \"rm -rf /\"",
      "sudo env FOO=1 bash -c 'sh -c \"rm -rf /\"'", "env -S 'rm -rf /'", "eval 'rm -rf /'",
      "eval rm -rf /", "nohup rm -rf / &", "timeout 5 rm -rf /", "xargs rm -rf /",
      "su -c 'rm -rf /' root", "busybox rm -rf /", "exec rm -rf /", "command rm -rf /",
      "echo \"$(rm -rf ~)\"", "x=`rm -rf /`", "(rm -rf /)", "{ rm -rf /; }",
      "if true; then rm -rf /; fi", "for i in 1; do rm -rf /; done", "f() { rm -rf /; }; f",
      "(cd /; rm -rf *)", "cd / && rm -rf *", "cd; rm -rf *", "cd /etc && rm -rf ./*",
      "find / -exec rm -rf / \\;",
      "mkfs /dev/sda1", "mkfs.ext4 /dev/sdb", "sudo mkfs.xfs /dev/nvme0n1", "wipefs -a /dev/sda",
      "dd if=/dev/zero of=/dev/sda", "dd of=/dev/nvme0n1 if=x", "echo x > /dev/sda",
      "cat img > /dev/mmcblk0", "shred /dev/sda",
      ":(){ :|:& };:", "bomb() { bomb | bomb & }; bomb", "f(){ f & f; }; f",
      "chmod -R 777 /", "chmod -R 000 /etc/", "chown -R nobody /usr", "chown -R me ~",
      "chgrp -R x /var", "sudo chmod --recursive 777 /",
      "launchctl unload ~/Library/LaunchAgents/x.plist", "launchctl bootout gui/501/x",
      "systemctl stop pilotfish", "sudo systemctl disable --now pilotfish.service",
      "systemctl --user mask pilotfish", "systemctl kill -s KILL pilotfish.service",
      "service pilotfish stop", "pkill -f pilotfish", "killall pilotfish",
      "pilotfish uninstall-service --user", "/usr/local/bin/pilotfish uninstall-service",
      "rm /etc/systemd/system/pilotfish.service", "rm -f ~/.config/systemd/user/pilotfish.service",
  };
  for (const char* line : denied) EXPECT_TRUE(hard_deny(parse_shell(line)).has_value()) << line;
}

TEST(HardDeny, LetsEverydayCommandsThrough) {
  const char* allowed[] = {
      "rm -rf build", "rm -rf ./build/", "rm -rf node_modules dist", "rm -f /tmp/x.log",
      "rm -rf /tmp/work", "rm file", "rm -rf ./*", "rm -rf *", "rm / ", "cd /tmp && rm -rf *",
      "cd build && rm -rf *", "chmod 644 README.md", "chmod -R 755 ./bin", "chown me file",
      "dd if=a of=b", "dd if=/dev/zero of=/dev/null count=1", "echo > /dev/null",
      "ls -la /", "cat /etc/hosts", "git rm -r --cached dir", "make clean", "f() { echo; }; f",
      "launchctl list", "mkdir -p /tmp/x", "grep -r mkfs .", "echo 'rm -rf /'",
      "systemctl status pilotfish", "systemctl stop nginx", "journalctl -u pilotfish",
      "pilotfish search retry", "pkill -f webpack", "rm pilotfish.log", "cat pilotfish.service",
  };
  for (const char* line : allowed) EXPECT_FALSE(hard_deny(parse_shell(line)).has_value()) << line;
}

TEST(HardDeny, SaysWhy) {
  EXPECT_EQ(hard_deny(parse_shell("sudo rm -Rf /")).value(), "recursive rm of /");
  EXPECT_EQ(hard_deny(parse_shell("dd if=x of=/dev/sda")).value(), "dd onto the device /dev/sda");
}

// Issue 23: recursive removal and chmod/chown/chgrp of anything in or under a system tree or a
// home folder's own (dot) folders, however the path is spelled; the workspace stays usable.
TEST(HardDeny, ProtectsEverythingUnderTheSystemTreesAndHomeFolders) {
  const char* denied[] = {
      // the examples
      "chmod -R 777 /etc/nginx", "chmod -R 755 /usr/local/bin", "rm -rf /etc/nginx", "rm -rf /usr/local",
      // every system tree, a folder under it, and a file deep inside
      "rm -rf /bin/x", "rm -rf /sbin/x", "rm -rf /lib/x86_64-linux-gnu", "rm -rf /lib32/x", "rm -rf /lib64/x",
      "rm -rf /libx32/x", "rm -rf /boot/grub", "rm -rf /boot", "rm -rf /var/lib/postgresql",
      "rm -rf /var/log", "rm -rf /opt/app", "rm -rf /srv/www", "rm -rf /root/.ssh", "rm -rf /root/work",
      "rm -rf /proc/1", "rm -rf /sys/fs/cgroup", "rm -rf /dev/shm/x", "rm -rf /usr/share/doc/a/b/c",
      "rm -rf /etc/ssl/certs/ca.pem", "rm -rf /System/Library", "rm -rf /Library/Preferences",
      "chown -R www-data /var/www", "chgrp -R staff /usr/local", "chmod -R 000 /opt/app/",
      "sudo chown --recursive me:me /etc/nginx", "chmod -R a+w /srv", "chown -R root /boot/efi",
      // spellings: quotes, doubled and trailing slashes, ".", "..", options after the operands
      "rm -rf '/etc/nginx'", "rm -rf \"/usr/local\"", "rm -rf /etc//nginx/", "rm -rf /etc/./nginx",
      "rm -rf /tmp/../etc/nginx", "rm -rf /tmp/../../usr/local", "rm -rf /home/me/repo/../../../etc",
      "rm -rf -- /usr/local", "rm /etc/nginx -rf", "rm -r -f /usr/local/lib", "rm --recursive /var/www",
      "/bin/rm -rf /etc/nginx", "sudo rm -rf /usr/local", "bash -c 'rm -rf /etc/nginx'",
      "rm -rf build /etc/nginx", "rm -rf /e'tc'/nginx",
      // wildcards and variables stand for anything there
      "rm -rf /etc/*", "rm -rf /usr/local/*", "rm -rf /e*", "rm -rf /*/nginx", "rm -rf /etc/ngin?",
      "rm -rf /etc/$X", "rm -rf /$DIR", "rm -rf /home/*", "rm -rf /home/*/repo", "rm -rf ~/.*",
      "rm -rf ~/$X", "rm -rf /etc/{a,b}",
      // home folders: the home roots, a home folder itself, its dot folders
      "rm -rf /home", "rm -rf /home/", "rm -rf /home/alice", "rm -rf /home/alice/", "rm -rf /Users/alice",
      "rm -rf ~alice", "rm -rf ~root", "rm -rf ~root/x", "rm -rf ~/.ssh", "rm -rf ~/.config/",
      "rm -rf ~/.ssh/keys", "rm -rf $HOME/.ssh", "rm -rf ${HOME}/.config", "rm -rf \"$HOME\"/.gnupg",
      "rm -rf /home/alice/.ssh", "rm -rf /home/alice/.config/app",
      "chown -R x ~/.ssh", "chmod -R 777 ~", "chmod -R 777 $HOME", "chown -R x ${HOME}/.local",
      "rm -rf ~/..", "rm -rf ~/../bob", "rm -rf ~/x/../..", "rm -rf ~/x/../.ssh", "rm -rf ~/*",
      // a cd to a known place first
      "cd /etc && rm -rf nginx", "cd /usr; rm -rf local", "cd /usr/local && chmod -R 755 bin",
      "cd ~ && rm -rf .ssh", "cd && rm -rf .config", "cd /tmp && rm -rf ../etc", "cd /etc; cd nginx; rm -rf *",
      "pushd /var && rm -rf log", "cd $HOME && rm -rf ./.ssh",
  };
  for (const char* line : denied) EXPECT_TRUE(hard_deny(parse_shell(line)).has_value()) << line;
}

TEST(HardDeny, LeavesTheWorkspaceAndTemporaryFoldersAlone) {
  const char* allowed[] = {
      "rm -rf build", "rm -rf ./build", "rm -rf src/generated", "rm -rf .cache", "rm -rf ./.git",
      "rm -rf ../other-checkout", "rm -rf /tmp/x", "rm -rf /tmp/a/b", "rm -rf /tmp/*", "rm -rf /tmp/../tmp/x",
      "rm -rf /home/alice/repo/build", "rm -rf /home/alice/repo", "rm -rf /home/alice/repo/.git",
      "rm -rf /Users/alice/src/app/dist", "rm -rf ~/repo/build", "rm -rf ~/projects", "rm -rf $HOME/work/out",
      "rm -rf ~/proj*", "rm -rf ~/.ssh/../repo", "chmod -R 755 ~/repo/bin", "chown -R me ~/repo",
      "chmod -R 755 /tmp/x", "chmod -R u+w .", "chown -R me:me build", "cd /tmp && rm -rf x",
      "cd /tmp && rm -rf *", "cd build && rm -rf *", "cd /etc && cd /tmp && rm -rf *",
      "cd ~/repo && rm -rf build", "rm -rf $TMPDIR/x", "rm /etc/nginx/x.conf", "chmod 644 /etc/x",
      "chown me /usr/local/bin/x", "cat /etc/nginx/nginx.conf", "ls -R /usr/local", "cp -r /etc/nginx conf",
      "grep -r x /usr/local", "rm -rf /mnt/scratch/x", "rm -rf /run/user/1000/tmp/x",
  };
  for (const char* line : allowed) EXPECT_FALSE(hard_deny(parse_shell(line)).has_value()) << line;
}

TEST(HardDeny, NamesTheResolvedPlace) {
  EXPECT_EQ(hard_deny(parse_shell("rm -rf /etc/nginx")).value(), "recursive rm of /etc/nginx");
  EXPECT_EQ(hard_deny(parse_shell("rm -rf /tmp/../usr/local")).value(), "recursive rm of /tmp/../usr/local (/usr/local)");
  EXPECT_EQ(hard_deny(parse_shell("chown -R x $HOME/.ssh")).value(), "recursive chown of $HOME/.ssh (~/.ssh)");
  EXPECT_EQ(hard_deny(parse_shell("cd /etc && rm -rf nginx")).value(), "recursive rm of nginx (/etc/nginx)");
}

// A workspace may lie under a system tree (/var/lib/..., /srv/...): its own files stay the
// model's to change, given as absolute paths or after a cd; a home folder as the workspace
// exempts nothing.
TEST(HardDeny, AWorkspaceUnderASystemTreeStaysUsable) {
  const std::vector<std::string> ws = {"/var/lib/pilotfish/workspaces/bot/", "/home/alice", "/srv/repo"};
  for (const char* line : {"rm -rf /var/lib/pilotfish/workspaces/bot/build", "rm -rf /srv/repo/dist",
                           "cd /var/lib/pilotfish/workspaces/bot && rm -rf build node_modules",
                           "chmod -R 755 /srv/repo/bin", "cd /srv/repo; rm -rf *", "rm -rf /srv/repo"}) {
    EXPECT_FALSE(hard_deny(parse_shell(line), ws).has_value()) << line;
    EXPECT_TRUE(hard_deny(parse_shell(line)).has_value()) << line;  // without the workspace: a system tree
  }
  for (const char* line : {"rm -rf /var/lib/pilotfish/workspaces/bot/../other", "rm -rf /var/lib/pilotfish",
                           "rm -rf /srv/repo/..", "rm -rf /srv/repository", "rm -rf /home/alice/.ssh",
                           "rm -rf /home/alice", "rm -rf ~/.ssh", "rm -rf /etc/nginx", "cd /srv/repo && rm -rf ../x"})
    EXPECT_TRUE(hard_deny(parse_shell(line), ws).has_value()) << line;
  EXPECT_TRUE(hard_deny(parse_shell("rm -rf /srv/x"), {"/"}).has_value());
  EXPECT_TRUE(hard_deny(parse_shell("rm -rf /root/x"), {"/root"}).has_value());
}

}  // namespace
}  // namespace pf
